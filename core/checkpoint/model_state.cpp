#include "checkpoint/model_state.h"

#include <map>

#include "orchestrate/error.h"

namespace orchestrate {

NamedTensors model_state(const torch::nn::Module& model) {
  NamedTensors out;
  for (const auto& item : model.named_parameters(/*recurse=*/true)) out.tensors.emplace_back(item.key(), item.value().detach());
  for (const auto& item : model.named_buffers(/*recurse=*/true)) out.tensors.emplace_back(item.key(), item.value().detach());
  return out;
}

void load_model_state(torch::nn::Module& model, const NamedTensors& weights, const std::string& source) {
  std::map<std::string, const at::Tensor*> saved;
  for (const auto& [name, tensor] : weights.tensors) saved[name] = &tensor;
  at::NoGradGuard no_grad;
  const auto live = model_state(model);
  for (const auto& [name, tensor] : live.tensors) {
    auto it = saved.find(name);
    if (it == saved.end())
      throw Error(source + " has no tensor '" + name + "' of this model: it was saved from another model");
    if (it->second->sizes() != tensor.sizes())
      throw Error(source + ": tensor '" + name + "' has shape " + shape_text(it->second->sizes()) + ", the model's is " +
                  shape_text(tensor.sizes()) + ": it was saved from another model configuration");
    // copy_ keeps the live tensor's device and memory format (channels_last).
    const_cast<at::Tensor&>(tensor).copy_(*it->second);
    saved.erase(it);
  }
  if (!saved.empty())
    throw Error(source + " holds tensor '" + saved.begin()->first + "' that this model does not have (" +
                std::to_string(saved.size()) + " such): it was saved from another model");
}

}  // namespace orchestrate
