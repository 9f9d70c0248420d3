#include "engine/train/training_run.h"
#include "engine/setup/elapsed_seconds.h"

#include <ATen/ATen.h>

#include <iomanip>
#include <sstream>

#include "engine/train/objective.h"

namespace orchestrate {

TrainingRun::TrainingRun(const RunParts& run, const CheckpointMeta* resume)
    : run_(run),
      console_(run.options, run.settings, !run.options.collective || run.options.collective->rank() == 0),
      precision_(run.settings.precision.mode, run.settings.precision.loss_scaler(), run.compute.device.type()),
      update_step_(run.components, run.settings.run.on_nonfinite, run.recorder),
      strategy_(make_strategy(
          run.options.collective,
          std::make_unique<GradientSync>(run.options.collective, update_step_.parameters(),
                                         run.components.compressor.get(), run.settings.compression.plugin,
                                         run.settings.distributed.bucket_size_mb),
          [this] { return local_stop(); })),
      stage2_(run.settings, run.components, run.recorder, run.options.collective, run.options.artifact_root,
              [this](const std::string& line) { console_.progress().message(line); }),
      graph_step_(run.settings.run.cuda_graph, run.compute.device, update_step_.parameters(),
                  run.components.micro_batches_per_update, cuda_graph_blocker(), run.recorder),
      metrics_(run.recorder, run.compute.device, run.options.collective, run.settings.run.on_nonfinite,
               run.settings.flush_seconds, [this](MetricValues& metrics) { add_owned_metrics(metrics); }),
      device_busy_(run.compute.rank == 0 && run.compute.device.is_cuda()
                       ? nvml_busy_reader(run.compute.device.has_index() ? run.compute.device.index() : 0)
                       : DeviceBusy::Reader(),
                   "NVML"),
      sync_check_(run.options.sync_debug, run.compute.device) {
  // A hook prints what its recipe asked for (a model's statistics), so
  // --quiet, which drops the progress line, does not drop it.
  run_.hooks.set_printer([this](const std::string& line) { console_.say(line); });
  if (!sync_check_.not_checked().empty()) console_.say(sync_check_.not_checked());
  stage2_.set_up(resume ? std::optional<std::int64_t>(resume->step) : std::nullopt);
  register_state();
  if (resume) restore(*resume, run_.options.resume_from);
  strategy_->start(*c().model, run_.recorder,
                   Strategy::Start{s().run.batch_size, c().micro_batches_per_update,
                                   s().distributed.bucket_size_mb, c().shards->describe()});
  start_input();
}

// Input feeding. An epoch is the micro-batches its updates use; a remainder
// smaller than one update is left out, so every epoch starts on a fresh
// permutation. A data-parallel job's ranks read disjoint, balanced shards
// (rank_shards.h). A stream dataset with [run] shuffle_buffer_size is
// shuffled as TF's Dataset.shuffle would, so its files are read nearly front
// to back.
void TrainingRun::start_input() {
  const ComputeSetup& compute = run_.compute;
  const std::int64_t per_epoch = c().updates_per_epoch * c().micro_batches_per_update;
  const std::int64_t shuffle_buffer = stream_shuffle_buffer(s(), *c().train_set);
  const SampleSource train_source{*c().train_set, *c().train_preprocessing, s().run.seed, compute.rank,
                                  compute.world_size, c().sites.train_set, c().sites.train_preprocessing};
  EpochPlan plan = [shards = c().shards, batch = s().run.batch_size, seed = s().run.seed, per_epoch, shuffle_buffer,
                    rank = compute.rank](std::int64_t epoch) {
    auto batches = shards->batches(rank, batch, seed, epoch, shuffle_buffer);
    batches.resize(static_cast<std::size_t>(per_epoch));
    return batches;
  };
  const std::int64_t first_batch = at_.update * c().micro_batches_per_update + at_.resume_micro;
  if (keep_data_on_device()) {
    const auto began = Clock::now();
    auto resident = std::make_unique<ResidentBatchFeeder>(train_source, std::move(plan), per_epoch, c().epochs,
                                                          compute.pipeline, compute.device, first_batch);
    std::ostringstream line;
    line << "the training split (" << resident->examples() << " examples, " << std::fixed << std::setprecision(1)
         << static_cast<double>(resident->bytes()) / (1 << 20) << " MiB) is kept on " << compute.device.str()
         << ", read in " << seconds_since(began) << " s; batches are gathered there";
    run_.recorder.event("data_on_device", line.str());
    input_.train_feeder = std::move(resident);
  } else {
    input_.train_pipeline = std::make_unique<BatchPipeline>(train_source, std::move(plan), per_epoch, c().epochs,
                                                            compute.pipeline, first_batch);
    input_.train_feeder = std::make_unique<DeviceBatchFeeder>(*input_.train_pipeline, run_.compute.device);
  }
  if (c().test_set)
    input_.evaluator = std::make_unique<Evaluator>(
        SampleSource{*c().test_set, *c().eval_preprocessing, s().run.seed, compute.rank, compute.world_size,
                     c().sites.test_set, c().sites.eval_preprocessing},
        s().eval.batch_size, run_.compute.device, c().epochs + 1, compute.pipeline);
}

// Why this run's micro-batches cannot be replayed as one CUDA graph, or "".
std::string TrainingRun::cuda_graph_blocker() const {
  if (run_.options.collective) return "a data-parallel job all-reduces its gradients during backward";
  if (c().compressor) return "[compression] plugin = \"" + s().compression.plugin + "\" exchanges the gradients";
  if (s().dim_reduce.enabled) return "[dim_reduce] trains its stage 2 with steps of its own";
  return "";
}

// [run] data_on_device: "on" keeps the split on the device or is an error;
// "auto" does on CUDA when the split allows it, and says so when it does not.
bool TrainingRun::keep_data_on_device() const {
  const DataOnDevice asked = s().run.data_on_device;
  if (asked == DataOnDevice::off || (asked == DataOnDevice::automatic && !run_.compute.device.is_cuda())) return false;
  const std::string blocker =
      resident_data_blocker(s().preprocessing_plugin, c().train_set->info(), c().train_set->size());
  if (blocker.empty()) return true;
  if (asked == DataOnDevice::on)
    throw RecipeError("[run] data_on_device = \"on\": the training split cannot be kept on the device: " + blocker +
                      "; use \"auto\" or \"off\"");
  run_.recorder.event("data_on_device", "the training split stays on the host: " + blocker);
  return false;
}

bool TrainingRun::eval_due(std::int64_t epoch) const {
  return input_.evaluator && s().eval.every_epochs > 0 && epoch % s().eval.every_epochs == 0;
}

void TrainingRun::run_eval(std::int64_t epoch) {
  const DeviceBusy::Pause evaluating(device_busy_);
  strategy_->share_buffers(*c().model);
  const auto start = Clock::now();
  const std::string label = "eval after epoch " + std::to_string(epoch);
  const EvalResult r = evaluate_model(
      *input_.evaluator, *c().model, run_.compute.device, s().precision.mode, run_.compute.channels_last,
      strategy_->sum_across_ranks(), [&](std::int64_t done, std::int64_t batches, std::int64_t images) {
        console_.progress().evaluating(label, done, batches, images);
      });
  c().model->train();
  MetricValues metrics;
  for (const auto& [name, value] : eval_metrics(r)) {
    metrics.emplace_back(name, value);
    metrics_.latest()[name] = value;
  }
  at_.evaluated_at_step = at_.update;
  const double seconds = seconds_since(start);
  metrics.emplace_back("time/eval_s", metrics_.add_eval_seconds(seconds));
  run_.recorder.metrics(at_.update, epoch, metrics);
  std::ostringstream line;
  line << "eval after epoch " << epoch << " (step " << at_.update << "): " << format_eval(r) << "  (" << r.examples
       << " images, " << std::fixed << std::setprecision(1) << seconds << " s)";
  run_.recorder.event("eval", line.str());
  console_.progress().message(line.str());
  metrics_.clock().set_aside();  // evaluation time is the event's, not the next step's
}

at::Tensor TrainingRun::batch_loss(const at::Tensor& images, const at::Tensor& labels) {
  const at::Tensor logits = precision_.forward(*c().model, images).logits;
  check_logits_shape(logits, images.size(0), c().input.num_classes, s().model_plugin);
  return cross_entropy(logits, labels, s().label_smoothing);
}

// What a log point records beside the window's own metrics.
void TrainingRun::add_owned_metrics(MetricValues& metrics) {
  metrics.emplace_back("train/reg_loss", regularization_loss());
  for (const auto& [name, value] : update_step_.metrics())
    if (value.defined()) metrics.emplace_back(name, value.item<double>());
  precision_.add_metrics(metrics, update_step_.skipped());
}

// 0.5 * sum over groups of weight_decay * |w|^2: the L2 term weight decay
// adds to the loss (the LARS seed logs it as reg_loss beside ent_loss).
double TrainingRun::regularization_loss() const {
  at::NoGradGuard no_grad;
  double total = 0;
  for (const auto& group : c().groups) {
    if (group.weight_decay == 0) continue;
    std::vector<at::Tensor> tensors;
    for (const auto& p : group.parameters) tensors.push_back(p.tensor.detach());
    const auto norms = at::_foreach_norm(tensors);
    total += 0.5 * group.weight_decay * at::stack(norms).pow(2).sum().item<double>();
  }
  return total;
}

}  // namespace orchestrate
