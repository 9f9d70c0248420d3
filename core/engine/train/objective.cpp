#include "engine/train/objective.h"

#include <ATen/ops/cross_entropy_loss.h>

#include "checkpoint/safetensors_header.h"
#include "orchestrate/error.h"

namespace orchestrate {

void check_logits_shape(const at::Tensor& logits, std::int64_t batch, std::int64_t num_classes,
                        const std::string& model) {
  if (logits.dim() == 2 && logits.size(0) == batch && logits.size(1) == num_classes) return;
  throw Error("[model] " + model + " returned logits of shape " + shape_text(logits.sizes()) + " for a batch of " +
              std::to_string(batch) + " images; the data set has " + std::to_string(num_classes) +
              " classes, so it must return [" +
              std::to_string(batch) + ", " + std::to_string(num_classes) +
              "]: build the model's last layer for ModelInput::num_classes (orchestrate conformance model " + model +
              " checks it)");
}

at::Tensor cross_entropy(const at::Tensor& logits, const at::Tensor& labels, double label_smoothing) {
  return at::cross_entropy_loss(logits.to(at::kFloat), labels, {}, at::Reduction::Mean, /*ignore_index=*/-100,
                                label_smoothing);
}

at::Tensor weighted_aux_loss(const std::map<std::string, at::Tensor>& aux_logits, const at::Tensor& labels,
                             const std::map<std::string, double>& weights, double label_smoothing,
                             const std::string& model,
                             const std::function<void(const std::string&, const at::Tensor&)>& log) {
  at::Tensor total;
  for (const auto& [name, logits] : aux_logits) {
    const auto weight = weights.find(name);
    if (weight == weights.end())
      throw Error("[model] " + model + " returned auxiliary logits '" + name +
                  "' that its ModelMeta does not declare (a plugin bug)");
    const auto loss = cross_entropy(logits, labels, label_smoothing);
    log("train/" + name + "_loss", loss.detach());
    total = total.defined() ? total + weight->second * loss : weight->second * loss;
  }
  return total;
}

}  // namespace orchestrate
