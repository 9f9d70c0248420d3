// The training objective: cross-entropy on the main classifier, plus the
// auxiliary classifiers' weighted losses (Inception's AuxLogits).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace orchestrate {

// A model's logits are [batch, classes]. One built for another class count
// would otherwise reach cross-entropy's "Target 7 is out of bounds", which
// names neither the model nor the shapes, or, with more outputs than
// classes, train without a word. Throws Error naming the model `model`.
// Reads sizes only: nothing waits for the device.
void check_logits_shape(const at::Tensor& logits, std::int64_t batch, std::int64_t num_classes,
                        const std::string& model);

// Mean cross-entropy in fp32, whatever the logits' autocast dtype.
at::Tensor cross_entropy(const at::Tensor& logits, const at::Tensor& labels, double label_smoothing);

// Each auxiliary loss is handed to `log` (logged as train/<name>_loss) and
// weighted by `weights`; a name the model did not declare is a plugin bug,
// named after `model`. Undefined when there are none.
at::Tensor weighted_aux_loss(const std::map<std::string, at::Tensor>& aux_logits, const at::Tensor& labels,
                             const std::map<std::string, double>& weights, double label_smoothing,
                             const std::string& model,
                             const std::function<void(const std::string&, const at::Tensor&)>& log);

}  // namespace orchestrate
