// FastNN's print_model_statistics: before the first update, the parameters
// of every layer (trainable or frozen), their total, and the forward FLOPs
// per image, printed and recorded as model/* metrics. Rank 0 only: every
// rank holds the same model.
#include <cstdint>
#include <iomanip>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "orchestrate/hook.h"
#include "orchestrate/model_flops.h"
#include "orchestrate/plugin.h"

namespace {

struct LayerCount {
  std::int64_t parameters = 0;
  std::int64_t trainable = 0;
};

// "layer1.0.conv1.weight" belongs to layer "layer1.0.conv1".
std::string layer_of(const std::string& parameter) {
  const auto dot = parameter.rfind('.');
  return dot == std::string::npos ? std::string("(model)") : parameter.substr(0, dot);
}

std::string with_thousands(std::int64_t n) {
  std::string digits = std::to_string(n);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) digits.insert(static_cast<std::size_t>(at), ",");
  return digits;
}

class PrintModelStatistics final : public orchestrate::Hook {
 public:
  PrintModelStatistics(bool per_layer, bool flops, bool leader) : per_layer_(per_layer), flops_(flops), leader_(leader) {}

  void on_train_begin(const orchestrate::TrainBegin& run, orchestrate::HookSink& sink) override {
    if (!leader_) return;
    std::vector<std::pair<std::string, LayerCount>> layers;  // in the model's order
    std::map<std::string, std::size_t> index;
    LayerCount total;
    for (const auto& item : run.model.named_parameters(/*recurse=*/true)) {
      const std::string layer = layer_of(item.key());
      if (!index.count(layer)) {
        index[layer] = layers.size();
        layers.emplace_back(layer, LayerCount{});
      }
      auto& count = layers[index[layer]].second;
      const std::int64_t n = item.value().numel();
      count.parameters += n;
      total.parameters += n;
      if (item.value().requires_grad()) {
        count.trainable += n;
        total.trainable += n;
      }
    }
    if (per_layer_) print_layers(layers, sink);
    std::ostringstream summary;
    summary << with_thousands(total.parameters) << " parameters (" << with_thousands(total.trainable)
            << " trainable) in " << layers.size() << " layers";
    sink.metric("model/parameters", static_cast<double>(total.parameters));
    sink.metric("model/trainable_parameters", static_cast<double>(total.trainable));
    if (flops_) {
      const auto flops = orchestrate::forward_flops_per_image(run.model, run.input, run.device);
      summary << "; " << std::fixed << std::setprecision(4) << static_cast<double>(flops.total) / 1e9
              << " GFLOPs per " << run.input.channels << "x" << run.input.height << "x" << run.input.width
              << " image forward (counted:";
      for (const auto& [op, n] : flops.by_op) summary << " " << op;
      summary << (flops.by_op.empty() ? " none" : "") << ")";
      sink.metric("model/forward_flops_per_image", static_cast<double>(flops.total));
    }
    sink.print(summary.str());
    sink.event("model_statistics", summary.str());
  }

 private:
  static void print_layers(const std::vector<std::pair<std::string, LayerCount>>& layers,
                           orchestrate::HookSink& sink) {
    std::size_t width = 5;
    for (const auto& [name, count] : layers) width = std::max(width, name.size());
    std::ostringstream header;
    header << std::left << std::setw(static_cast<int>(width)) << "layer" << std::right << std::setw(14)
           << "parameters" << std::setw(14) << "trainable";
    sink.print(header.str());
    for (const auto& [name, count] : layers) {
      std::ostringstream row;
      row << std::left << std::setw(static_cast<int>(width)) << name << std::right << std::setw(14)
          << with_thousands(count.parameters) << std::setw(14) << with_thousands(count.trainable);
      sink.print(row.str());
    }
  }

  bool per_layer_;
  bool flops_;
  bool leader_;
};

void register_components(orchestrate::Registry& registry) {
  registry.hooks().add(
      "print_model_statistics",
      "before training: parameters per layer, total and trainable, and forward FLOPs per image "
      "(model/* metrics; FastNN's print_model_statistics)",
      {orchestrate::bool_param("per_layer", true, "print one line per layer, not only the totals"),
       orchestrate::bool_param("flops", true,
                               "count forward FLOPs per image with LibTorch's profiler (convolutions and matrix "
                               "products; other ops count as zero)")},
      [](const orchestrate::Params& params, const orchestrate::HookContext& context) {
        return std::make_unique<PrintModelStatistics>(params.boolean("per_layer"), params.boolean("flops"),
                                                      context.rank == 0);
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("print_model_statistics", "1.0.0", register_components)
