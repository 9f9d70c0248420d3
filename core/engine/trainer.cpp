#include "trainer.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/ops/cross_entropy_loss.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "components.h"
#include "device.h"
#include "epoch_plan.h"
#include "evaluator.h"
#include "orchestrate/error.h"
#include "progress_line.h"
#include "run_identity.h"
#include "stop_signal.h"

namespace orchestrate {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

std::string format_eval(const EvalResult& r) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(4) << "top1 " << r.top1;
  if (r.top5 >= 0) out << "  top5 " << r.top5;
  out << "  loss " << r.loss;
  return out.str();
}

// The state of one training run, so the loop reads as the steps it takes.
class TrainingRun {
 public:
  TrainingRun(const Recipe& recipe, TrainingComponents& c, RunStore& store, std::int64_t run_id,
              const c10::Device& device, const TrainOptions& options, const StopSignal& stop)
      : recipe_(recipe),
        c_(c),
        store_(store),
        run_id_(run_id),
        device_(device),
        progress_(options.progress ? *options.progress : null_stream_,
                  options.progress ? parse_progress_mode(recipe.log.string("progress")) : ProgressMode::never,
                  recipe.run.integer("log_every"), options.progress_is_terminal),
        stop_(stop) {
    pipeline_.workers = static_cast<int>(recipe.run.integer("num_workers"));
    pipeline_.prefetch = static_cast<int>(recipe.run.integer("prefetch_batches"));
    pipeline_.pin_memory = device.is_cuda();
  }

  RunStatus run() {
    const std::int64_t eval_every = recipe_.eval.integer("every_epochs");
    bool evaluated_last = false;
    for (std::int64_t epoch = 0; epoch < c_.epochs && step_ < c_.total_steps; ++epoch) {
      train_epoch(epoch);
      if (stop_.requested()) break;
      evaluated_last = false;
      if (c_.test_set && eval_every > 0 && (epoch + 1) % eval_every == 0) {
        run_eval(epoch + 1);
        evaluated_last = true;
      }
    }
    if (stop_.requested()) {
      progress_.finish();
      const std::string why = std::string("stopped by signal ") + std::to_string(stop_.signal_number()) + " at step " +
                              std::to_string(step_);
      store_.record_event(run_id_, "interrupted", why);
      progress_.message("interrupted: " + why + "; run recorded as interrupted");
      return RunStatus::interrupted;
    }
    if (c_.test_set && !evaluated_last) run_eval(c_.epochs);
    progress_.finish();
    return RunStatus::finished;
  }

  std::int64_t steps() const { return step_; }

 private:
  void train_epoch(std::int64_t epoch) {
    c_.model->train();
    const std::int64_t batch_size = recipe_.run.integer("batch_size");
    BatchPipeline pipeline(*c_.train_set,
                           shuffled_batches(c_.train_set->size(), batch_size, recipe_.run.integer("seed"), epoch, true),
                           pipeline_);
    const std::int64_t log_every = recipe_.run.integer("log_every");
    while (step_ < c_.total_steps && !stop_.requested()) {
      const auto t0 = Clock::now();
      auto batch = pipeline.next();
      if (!batch) break;
      const auto images = batch->images.to(device_, /*non_blocking=*/true);
      const auto labels = batch->labels.to(device_, /*non_blocking=*/true);
      sync();
      const auto t1 = Clock::now();

      const auto loss = at::cross_entropy_loss(c_.model->forward(images), labels);
      loss.backward();
      const double loss_value = loss.item<double>();
      const auto t2 = Clock::now();

      const double lr = c_.schedule->learning_rate(step_);
      for (auto& group : c_.optimizer->param_groups()) group.options().set_lr(lr);
      c_.optimizer->step();
      c_.optimizer->zero_grad();
      sync();
      const auto t3 = Clock::now();

      ++step_;
      if (!std::isfinite(loss_value))
        throw Error("training diverged: loss is " + std::to_string(loss_value) + " at step " + std::to_string(step_) +
                    "; lower [optimizer] lr or check the data");
      StepTiming timing;
      timing.step = step_;
      timing.epoch = epoch + 1;
      timing.images = labels.size(0);
      timing.data_wait_s = seconds_between(t0, t1);
      timing.compute_s = seconds_between(t1, t2);
      timing.optimizer_s = seconds_between(t2, t3);
      timing.total_s = seconds_between(t0, t3);
      timing.loss = loss_value;
      timing.learning_rate = lr;
      store_.record_step(run_id_, timing);

      window_loss_ += loss_value;
      ++window_steps_;
      if (step_ % log_every == 0 || step_ == c_.total_steps) {
        recent_loss_ = window_loss_ / window_steps_;
        store_.record_metric(run_id_, step_, epoch + 1, "train/loss", recent_loss_);
        window_loss_ = 0;
        window_steps_ = 0;
      }
      progress_.update({epoch + 1, c_.epochs, step_, c_.total_steps, window_steps_ ? loss_value : recent_loss_, lr},
                       timing.images);
    }
  }

  void run_eval(std::int64_t epoch) {
    const auto start = Clock::now();
    const EvalResult r =
        evaluate(*c_.model, *c_.test_set, recipe_.eval.integer("batch_size"), device_, pipeline_);
    store_.record_metric(run_id_, step_, epoch, "eval/top1", r.top1);
    if (r.top5 >= 0) store_.record_metric(run_id_, step_, epoch, "eval/top5", r.top5);
    store_.record_metric(run_id_, step_, epoch, "eval/loss", r.loss);
    std::ostringstream line;
    line << "eval after epoch " << epoch << " (step " << step_ << "): " << format_eval(r) << "  (" << r.examples
         << " images, " << std::fixed << std::setprecision(1) << seconds_between(start, Clock::now()) << " s)";
    progress_.message(line.str());
  }

  // CUDA work is asynchronous; the phase timings are only true if each phase
  // has finished on the device before its clock stops.
  void sync() const {
    if (device_.is_cuda()) torch::cuda::synchronize();
  }

  const Recipe& recipe_;
  TrainingComponents& c_;
  RunStore& store_;
  const std::int64_t run_id_;
  const c10::Device device_;
  std::ostringstream null_stream_;
  ProgressLine progress_;
  PipelineOptions pipeline_;
  const StopSignal& stop_;
  std::int64_t step_ = 0;
  double window_loss_ = 0;
  std::int64_t window_steps_ = 0;
  double recent_loss_ = 0;
};

RunRecord record_for(const Recipe& recipe, const Registry& registry, const c10::Device& device) {
  RunRecord r;
  r.name = recipe.run_name();
  r.recipe_path = recipe.path;
  r.resolved_recipe = recipe.resolved_toml();
  r.orchestrate_version = version();
  r.torch_version = TORCH_VERSION;
  r.host = host_name();
  r.device = device.str();
  r.git_revision = git_revision_of(recipe.path);
  r.world_size = 1;
  r.plugins = plugins_used(recipe, registry);
  r.params = recipe.flattened();
  return r;
}

}  // namespace

TrainOutcome train(const Recipe& recipe, const Registry& registry, RunStore& store, const TrainOptions& options) {
  const auto start = Clock::now();
  if (const auto threads = recipe.run.integer("threads"); threads > 0) at::set_num_threads(static_cast<int>(threads));
  const c10::Device device = select_device(recipe.run.string("device"));
  // Seeded before any component exists, so weight init and augmentation are reproducible.
  at::manual_seed(static_cast<std::uint64_t>(recipe.run.integer("seed")));

  // Installed before the run row exists: a Ctrl-C while the data loads still
  // ends with the run recorded as interrupted, never left "running".
  const StopSignal stop;
  TrainOutcome outcome;
  outcome.run_id = store.begin_run(record_for(recipe, registry, device));
  try {
    TrainingComponents components = build_components(recipe, registry, device);
    TrainingRun run(recipe, components, store, outcome.run_id, device, options, stop);
    outcome.status = run.run();
    outcome.steps = run.steps();
    store.finish_run(outcome.run_id, outcome.status);
  } catch (const std::exception& e) {
    try {
      store.record_event(outcome.run_id, "error", e.what());
      store.finish_run(outcome.run_id, RunStatus::failed, e.what());
    } catch (const std::exception& store_error) {
      std::cerr << "orchestrate: could not record the failure in " << store.path() << ": " << store_error.what()
                << "\n";
    }
    if (dynamic_cast<const Error*>(&e)) throw;
    // LibTorch's errors carry a C++ backtrace after the first line; the user needs the first line.
    const std::string what = e.what();
    throw Error("training failed: " + what.substr(0, what.find('\n')));
  }
  outcome.wall_s = seconds_between(start, Clock::now());
  if (auto summary = store.find_run(std::to_string(outcome.run_id))) outcome.final_metrics = summary->final_metrics;
  return outcome;
}

}  // namespace orchestrate
