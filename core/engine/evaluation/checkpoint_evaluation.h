// `orchestrate eval`: one evaluation of saved weights on the recipe's test
// split, computed exactly as the training run evaluated (same model build,
// device, threads, precision, memory format, batches), and recorded as an
// eval run linked to the training run that saved the weights.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "engine/evaluation/eval_target.h"
#include "engine/evaluation/evaluator.h"
#include "engine/recipe/recipe.h"
#include "engine/recipe/settings.h"
#include "engine/setup/compute_setup.h"
#include "orchestrate/dataset.h"
#include "orchestrate/model.h"
#include "orchestrate/preprocessing.h"
#include "orchestrate/registry.h"
#include "store/run_records.h"

namespace orchestrate {

class RunStore;

struct EvalOutcome {
  std::int64_t run_id = 0;
  std::string run_name;
  EvalResult result;
  double seconds = 0;  // the evaluation pass
  double images_per_s = 0;
};

class CheckpointEvaluation {
 public:
  // Builds the recipe's model and test split as training does and loads the
  // target's weights into the model. Everything that can be refused is
  // refused here, before any run is recorded: evaluation switched off or an
  // empty test split (RecipeError), weights that do not fit the model
  // (UsageError naming the tensors and shapes), data or a model that fails to build.
  CheckpointEvaluation(const Recipe& recipe, const Registry& registry, EvalTarget target);

  // Evaluates once and records an eval run in `store` (named after the
  // recipe's run with "_eval" appended, so a name still finds the training
  // run): eval/top1, eval/top5, eval/loss and eval/images_per_s at the
  // checkpoint's step, and an event naming what was evaluated. A failure
  // while evaluating leaves the run failed and is rethrown. `scored` hears
  // of each batch, for a progress line.
  EvalOutcome run(RunStore& store, const BatchesScored& scored = {});

 private:
  const Recipe& recipe_;
  const Registry& registry_;
  const Settings settings_;
  const EvalTarget target_;
  const std::chrono::steady_clock::time_point started_;
  ComputeSetup compute_;
  std::unique_ptr<Dataset> test_set_;
  std::unique_ptr<Preprocessing> preprocessing_;  // the eval variant
  std::shared_ptr<Model> model_;
};

}  // namespace orchestrate
