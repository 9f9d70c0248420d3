#include "engine/recipe/cross_table_checks.h"

namespace orchestrate {

namespace {

// A compressor's declared rules (CompressionRules) against the optimizer it
// would feed, and precision it cannot mix with.
std::vector<std::string> compression_problems(const Settings& s, const Registry& registry) {
  std::vector<std::string> out;
  const std::string where = "[gradient_compression] " + s.compression.plugin + ": ";
  const auto& rules = registry.gradient_compressors().get(s.compression.plugin).meta;
  if (rules.base_optimizer_problem)
    if (auto why = rules.base_optimizer_problem(s.compression.params, s.optimizer.plugin); !why.empty())
      out.push_back(where + why);
  if (rules.takes_over_weight_decay)
    for (const auto& wrapper : s.optimizer.wrappers)
      if (registry.optimizer_wrappers().get(wrapper.plugin).meta.takes_over_weight_decay)
        out.push_back(where + "it adds weight decay to the gradients itself, and so does wrapper '" + wrapper.plugin +
                      "'; remove one of them");
  if (s.compression.plugin != "none" && s.precision.mode == PrecisionMode::fp16 &&
      s.precision.scaler.mode != LossScaleMode::off)
    out.push_back(where + "fp16 loss scaling is not supported with gradient compression yet (its residuals would "
                          "mix scales); use precision.mode = \"bf16\", or loss_scaling = \"off\"");
  return out;
}

// Stage 2 takes each update itself, from one batch's gradient and losses:
// what changes the update elsewhere in the recipe cannot apply to it.
std::vector<std::string> dim_reduce_problems(const Settings& s, const Registry&) {
  std::vector<std::string> out;
  if (!s.dim_reduce.enabled) return out;
  const std::string where = "[dim_reduce] enabled = true: ";
  if (!s.optimizer.wrappers.empty())
    out.push_back(where + "the update is dim_reduce's own, so [[optimizer.wrappers]] (" +
                  s.optimizer.wrappers.front().plugin + ") would not apply; remove them for stage 2");
  if (s.precision.mode == PrecisionMode::fp16)
    out.push_back(where + "fp16 loss scaling is not supported in stage 2; set [precision] mode = \"bf16\" or \"fp32\"");
  if (s.compression.plugin != "none")
    out.push_back(where + "gradient compression (" + s.compression.plugin +
                  ") is not supported in stage 2; remove [gradient_compression]");
  if (s.dim_reduce.from_epoch <= 1) return out;
  const std::string both = "[dim_reduce] from_epoch = " + std::to_string(s.dim_reduce.from_epoch);
  if (s.dim_reduce.from_epoch > s.run.epochs)
    out.push_back(both + " is after the last epoch ([run] epochs = " + std::to_string(s.run.epochs) +
                  "); stage 2 would never start: raise [run] epochs or lower from_epoch");
  else if (s.dim_reduce.snapshots.empty() && !s.snapshots.policy.enabled())
    out.push_back(both + " computes its PCA from this run's stage-1 snapshots, and [snapshots] saves none; "
                         "set [snapshots] every_steps or every_epochs (and from_epoch before " +
                  std::to_string(s.dim_reduce.from_epoch) + ")");
  else if (s.dim_reduce.snapshots.empty() && s.snapshots.policy.from_epoch >= s.dim_reduce.from_epoch)
    out.push_back(both + " but [snapshots] from_epoch = " + std::to_string(s.snapshots.policy.from_epoch) +
                  ": stage 1 would save no snapshot before stage 2 starts; set [snapshots] from_epoch below " +
                  std::to_string(s.dim_reduce.from_epoch));
  return out;
}

}  // namespace

const std::vector<CrossTableCheck>& cross_table_checks() {
  static const std::vector<CrossTableCheck> checks{
      {"gradient_compression", compression_problems},
      {"dim_reduce", dim_reduce_problems},
  };
  return checks;
}

}  // namespace orchestrate
