#include "engine/evaluation/evaluator.h"

#include <ATen/ops/cross_entropy_loss.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "engine/input/epoch_plan.h"

namespace orchestrate {

namespace {

// Every world-th batch of the split in order, from batch `rank` on.
BatchIndices rank_batches(std::int64_t size, std::int64_t batch_size, int rank, int world) {
  auto all = sequential_batches(size, batch_size);
  BatchIndices mine;
  for (std::size_t i = static_cast<std::size_t>(rank); i < all.size(); i += static_cast<std::size_t>(world))
    mine.push_back(std::move(all[i]));
  return mine;
}

}  // namespace

Evaluator::Evaluator(SampleSource source, std::int64_t batch_size, const c10::Device& device, std::int64_t rounds,
                     const PipelineOptions& options)
    : source_(source),
      device_(device),
      pipeline_(
          source,
          [size = source.dataset.size(), batch_size, rank = source.rank, world = source.world_size](std::int64_t) {
            return rank_batches(size, batch_size, rank, world);
          },
          static_cast<std::int64_t>(
              rank_batches(source.dataset.size(), batch_size, source.rank, source.world_size).size()),
          rounds, options),
      feeder_(pipeline_, device) {}

EvalResult Evaluator::run(const Forward& forward, const SumAcrossRanks& sum_across_ranks,
                          const BatchesScored& scored) {
  const std::int64_t classes = source_.dataset.info().num_classes;
  const std::int64_t k = std::min<std::int64_t>(5, classes);
  // Sums stay on the device and are read once at the end: no sync per batch.
  at::Tensor loss_sum, top1, top5;
  std::int64_t seen = 0;
  const std::int64_t batches = pipeline_.batches_per_epoch();
  if (scored) scored(0, batches, 0);
  for (std::int64_t i = 0; i < batches; ++i) {
    auto batch = feeder_.next();  // finished, on the device
    if (!batch) break;
    const auto& images = batch->images;
    const auto& labels = batch->labels;
    const auto logits = forward(images).to(at::kFloat);
    const auto loss = at::cross_entropy_loss(logits, labels, {}, at::Reduction::Sum);
    const auto best = std::get<1>(logits.topk(k, /*dim=*/1));
    const auto hits = best.eq(labels.unsqueeze(1));
    const auto batch_top1 = hits.select(1, 0).sum();
    const auto batch_top5 = hits.any(1).sum();
    loss_sum = loss_sum.defined() ? loss_sum + loss : loss;
    top1 = top1.defined() ? top1 + batch_top1 : batch_top1;
    top5 = top5.defined() ? top5 + batch_top5 : batch_top5;
    seen += labels.size(0);
    if (scored) scored(i + 1, batches, seen);
  }
  // One read of the device: [loss sum, top-1 hits, top-5 hits, examples].
  const auto options = at::TensorOptions().dtype(at::kDouble).device(device_);
  auto sums = seen == 0 ? at::zeros({4}, options)
                        : at::stack({loss_sum.to(at::kDouble), top1.to(at::kDouble), top5.to(at::kDouble),
                                     at::scalar_tensor(static_cast<double>(seen), options)});
  if (sum_across_ranks) sum_across_ranks(sums);
  const auto host = sums.to(at::kCPU).contiguous();
  const double* value = host.data_ptr<double>();
  EvalResult result;
  result.examples = static_cast<std::int64_t>(value[3]);
  if (result.examples == 0) return result;
  result.top1 = value[1] / value[3];
  result.top5 = classes >= 5 ? value[2] / value[3] : -1;
  result.loss = value[0] / value[3];
  return result;
}

EvalResult evaluate_model(Evaluator& evaluator, Model& model, const c10::Device& device, PrecisionMode precision,
                          bool channels_last, const SumAcrossRanks& sum_across_ranks, const BatchesScored& scored) {
  model.eval();
  c10::InferenceMode inference;
  return evaluator.run(
      [&](const at::Tensor& images) {
        AutocastScope autocast(device.type(), precision);
        return model.forward(channels_last ? images.contiguous(at::MemoryFormat::ChannelsLast) : images);
      },
      sum_across_ranks, scored);
}

std::map<std::string, double> eval_metrics(const EvalResult& result) {
  std::map<std::string, double> metrics{{"eval/top1", result.top1}, {"eval/loss", result.loss}};
  if (result.top5 >= 0) metrics["eval/top5"] = result.top5;
  return metrics;
}

std::string format_eval(const EvalResult& result) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(4) << "top1 " << result.top1;
  if (result.top5 >= 0) out << "  top5 " << result.top5;
  out << "  loss " << result.loss;
  return out.str();
}

}  // namespace orchestrate
