#include "engine/evaluation/checkpoint_evaluation.h"
#include "engine/recipe/recipe_settings.h"
#include "engine/setup/elapsed_seconds.h"
#include "store/run_store.h"

#include <iomanip>
#include <sstream>

#include "engine/setup/components.h"
#include "engine/setup/run_identity.h"
#include "engine/setup/weight_transfer.h"
#include "orchestrate/error.h"
#include "store/run_failure.h"

namespace orchestrate {

namespace {

using Clock = std::chrono::steady_clock;


}  // namespace

CheckpointEvaluation::CheckpointEvaluation(const Recipe& recipe, const Registry& registry, EvalTarget target)
    : recipe_(recipe),
      registry_(registry),
      settings_(settings_of(recipe)),
      target_(std::move(target)),
      started_(Clock::now()) {
  if (!settings_.eval.enabled)
    throw RecipeError(recipe.path + ": [eval] enabled = false: the recipe has no evaluation to run; "
                      "turn it on with --set eval.enabled=true");
  compute_ = set_up_compute(settings_);
  test_set_ = build_test_set(settings_, registry);
  if (test_set_->size() == 0)
    throw RecipeError(recipe.path + ": [data] " + settings_.data_plugin + " has an empty test split: nothing to evaluate");
  // Datasets describe both splits alike, and both preprocessing variants
  // give one shape, so the test split's classes and the eval variant's
  // output build the model training built.
  preprocessing_ = build_preprocessing(settings_, registry, test_set_->info(), PreprocessingVariant::eval);
  model_ = build_model(settings_, registry, model_input(*preprocessing_, test_set_->info()), compute_);
  const WeightsFit fit = load_fitting_weights(*model_, target_.weights_file, {});
  if (!fit.complete()) {
    std::string saved_by;
    if (!target_.model.empty() && target_.model != settings_.model_plugin)
      saved_by = " (they were saved by model " + target_.model + ")";
    throw UsageError("--checkpoint " + target_.argument + ": its weights do not fit the recipe's model " +
                     settings_.model_plugin + saved_by + ": " + fit.problems());
  }
}

EvalOutcome CheckpointEvaluation::run(RunStore& store, const BatchesScored& scored) {
  RunRecord record = run_record_of(recipe_, settings_, registry_, compute_.device);
  record.name += "_eval";
  record.kind = RunKind::eval;
  record.source_run_id = target_.source_run_id;
  EvalOutcome outcome;
  outcome.run_name = record.name;
  outcome.run_id = store.begin_run(record);
  try {
    const std::int64_t step = target_.step, epoch = target_.epoch;
    store.record_event(outcome.run_id, "evaluates", target_.provenance);
    store.record_metric(outcome.run_id, step, epoch, "time/setup_s", seconds_since(started_));
    // One round, with the pipeline options training used: the same batches in the same order.
    Evaluator evaluator(SampleSource{*test_set_, *preprocessing_, settings_.run.seed}, settings_.eval.batch_size,
                        compute_.device, 1, compute_.pipeline);
    const auto start = Clock::now();
    outcome.result = evaluate_model(evaluator, *model_, compute_.device, settings_.precision.mode,
                                    compute_.channels_last, {}, scored);
    outcome.seconds = seconds_since(start);
    outcome.images_per_s = outcome.seconds > 0 ? static_cast<double>(outcome.result.examples) / outcome.seconds : 0;
    for (const auto& [name, value] : eval_metrics(outcome.result))
      store.record_metric(outcome.run_id, step, epoch, name, value);
    store.record_metric(outcome.run_id, step, epoch, "eval/images_per_s", outcome.images_per_s);
    store.record_metric(outcome.run_id, step, epoch, "time/eval_s", outcome.seconds);
    std::ostringstream line;
    line << "eval at step " << step << ": " << format_eval(outcome.result) << "  (" << outcome.result.examples
         << " images, " << std::fixed << std::setprecision(1) << outcome.images_per_s << " images/s)";
    store.record_event(outcome.run_id, "eval", line.str());
    store.finish_run(outcome.run_id, RunStatus::finished);
  } catch (const std::exception& e) {
    fail_run(store, outcome.run_id, e, "evaluation");
  }
  return outcome;
}

}  // namespace orchestrate
