#include "evaluator.h"

#include <ATen/ops/cross_entropy_loss.h>
#include <c10/core/GradMode.h>

#include <algorithm>

#include "epoch_plan.h"

namespace orchestrate {

EvalResult evaluate(Model& model, const Dataset& dataset, std::int64_t batch_size, const c10::Device& device,
                    const PipelineOptions& pipeline_options) {
  const bool was_training = model.is_training();
  model.eval();
  at::NoGradGuard no_grad;
  const std::int64_t classes = dataset.info().num_classes;
  const std::int64_t k = std::min<std::int64_t>(5, classes);

  BatchPipeline pipeline(dataset, sequential_batches(dataset.size(), batch_size), pipeline_options);
  double loss_sum = 0;
  std::int64_t top1 = 0, top5 = 0, seen = 0;
  while (auto batch = pipeline.next()) {
    const auto images = batch->images.to(device, /*non_blocking=*/true);
    const auto labels = batch->labels.to(device, /*non_blocking=*/true);
    const auto logits = model.forward(images);
    loss_sum += at::cross_entropy_loss(logits, labels, {}, at::Reduction::Sum).item<double>();
    const auto best = std::get<1>(logits.topk(k, /*dim=*/1));
    const auto hits = best.eq(labels.unsqueeze(1));
    top1 += hits.select(1, 0).sum().item<std::int64_t>();
    top5 += hits.any(1).sum().item<std::int64_t>();
    seen += labels.size(0);
  }
  model.train(was_training);

  EvalResult result;
  result.examples = seen;
  if (seen == 0) return result;
  result.top1 = static_cast<double>(top1) / seen;
  result.top5 = classes >= 5 ? static_cast<double>(top5) / seen : -1;
  result.loss = loss_sum / seen;
  return result;
}

}  // namespace orchestrate
