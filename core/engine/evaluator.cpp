#include "evaluator.h"

#include <ATen/ops/cross_entropy_loss.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "epoch_plan.h"

namespace orchestrate {

namespace {
std::int64_t batch_count(std::int64_t size, std::int64_t batch_size) { return (size + batch_size - 1) / batch_size; }
}  // namespace

Evaluator::Evaluator(const Dataset& dataset, std::int64_t batch_size, const c10::Device& device, std::int64_t rounds,
                     const PipelineOptions& options)
    : dataset_(dataset),
      device_(device),
      pipeline_(
          dataset, [size = dataset.size(), batch_size](std::int64_t) { return sequential_batches(size, batch_size); },
          batch_count(dataset.size(), batch_size), rounds, options) {}

EvalResult Evaluator::run(const Forward& forward) {
  const std::int64_t classes = dataset_.info().num_classes;
  const std::int64_t k = std::min<std::int64_t>(5, classes);
  // Sums stay on the device and are read once at the end: no sync per batch.
  at::Tensor loss_sum, top1, top5;
  std::int64_t seen = 0;
  for (std::int64_t i = 0; i < pipeline_.batches_per_epoch(); ++i) {
    auto batch = pipeline_.next();
    if (!batch) break;
    const auto images = batch->images.to(device_, /*non_blocking=*/true);
    const auto labels = batch->labels.to(device_, /*non_blocking=*/true);
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
  }
  EvalResult result;
  result.examples = seen;
  if (seen == 0) return result;
  result.top1 = top1.item<double>() / seen;
  result.top5 = classes >= 5 ? top5.item<double>() / seen : -1;
  result.loss = loss_sum.item<double>() / seen;
  return result;
}

EvalResult evaluate_model(Evaluator& evaluator, Model& model, const c10::Device& device, PrecisionMode precision,
                          bool channels_last) {
  model.eval();
  c10::InferenceMode inference;
  return evaluator.run([&](const at::Tensor& images) {
    AutocastScope autocast(device.type(), precision);
    return model.forward(channels_last ? images.contiguous(at::MemoryFormat::ChannelsLast) : images);
  });
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
