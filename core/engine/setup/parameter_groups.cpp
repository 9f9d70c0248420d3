#include "engine/setup/parameter_groups.h"

#include <map>

#include "orchestrate/error.h"

namespace orchestrate {

std::vector<ParameterGroup> form_parameter_groups(const torch::nn::Module& model, const OptimizerSettings& settings) {
  std::vector<ParameterGroup> groups;
  std::map<std::pair<int, bool>, std::size_t> index_of;  // (rule index or -1, no decay) -> group
  for (const auto& item : model.named_parameters(/*recurse=*/true)) {
    const at::Tensor& tensor = item.value();
    if (!tensor.requires_grad()) continue;
    const std::string& name = item.key();
    int rule = -1;
    for (std::size_t i = 0; i < settings.groups.size() && rule < 0; ++i)
      if (std::regex_search(name, settings.groups[i].match)) rule = static_cast<int>(i);
    bool no_decay = !settings.decay_norm_and_bias && tensor.dim() <= 1;
    for (const auto& pattern : settings.no_decay) no_decay = no_decay || std::regex_search(name, pattern);

    const auto key = std::make_pair(rule, no_decay);
    auto it = index_of.find(key);
    if (it == index_of.end()) {
      ParameterGroup group;
      group.label = (rule >= 0 ? "groups." + std::to_string(rule) + (no_decay ? ".no_decay" : "")
                               : std::string(no_decay ? "no_decay" : "decay"));
      group.lr_scale = rule >= 0 ? settings.groups[rule].lr_scale : 1.0;
      const double decay_scale = rule >= 0 ? settings.groups[rule].weight_decay_scale : 1.0;
      group.weight_decay = no_decay ? 0.0 : settings.weight_decay * decay_scale;
      group.exclude_from_layer_adaptation = no_decay;
      it = index_of.emplace(key, groups.size()).first;
      groups.push_back(std::move(group));
    }
    groups[it->second].parameters.push_back({name, tensor});
  }
  if (groups.empty()) throw Error("[model] the model has no trainable parameters; nothing to optimize");
  return groups;
}

}  // namespace orchestrate
