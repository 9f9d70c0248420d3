#include "settings.h"

#include "core_settings_tables.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace {

OptimizerSettings optimizer_settings(const TableValues& t) {
  OptimizerSettings s = optimizer_keys().read(t.core);
  s.plugin = t.plugin;
  s.params = t.component;
  s.base_lr = t.component.real("lr");
  for (const auto& pattern : s.no_decay_patterns) s.no_decay.emplace_back(pattern);
  for (const auto& group : t.list("groups")) {
    ParameterGroupRule rule = group_keys().read(group.core);
    rule.match = std::regex(rule.pattern);
    s.groups.push_back(std::move(rule));
  }
  for (const auto& wrapper : t.list("wrappers")) s.wrappers.push_back({wrapper.plugin, wrapper.component});
  return s;
}

// Stage 2 takes each update itself, from one batch's gradient and losses:
// what changes the update elsewhere in the recipe cannot apply to it.
void check_dim_reduce(const Settings& s, const std::string& recipe_path) {
  if (!s.dim_reduce.enabled) return;
  const std::string where = recipe_path + ": [dim_reduce] enabled = true: ";
  if (!s.optimizer.wrappers.empty())
    throw RecipeError(where + "the update is dim_reduce's own, so [[optimizer.wrappers]] (" +
                      s.optimizer.wrappers.front().plugin + ") would not apply; remove them for stage 2");
  if (s.precision.mode == PrecisionMode::fp16)
    throw RecipeError(where + "fp16 loss scaling is not supported in stage 2; set [precision] mode = \"bf16\" or \"fp32\"");
  if (s.compression.plugin != "none")
    throw RecipeError(where + "gradient compression (" + s.compression.plugin +
                      ") is not supported in stage 2; remove [gradient_compression]");
  if (s.dim_reduce.from_epoch > 1) {
    const std::string both = recipe_path + ": [dim_reduce] from_epoch = " + std::to_string(s.dim_reduce.from_epoch);
    if (s.dim_reduce.from_epoch > s.run.epochs)
      throw RecipeError(both + " is after the last epoch ([run] epochs = " + std::to_string(s.run.epochs) +
                        "); stage 2 would never start: raise [run] epochs or lower from_epoch");
    if (s.dim_reduce.snapshots.empty() && !s.snapshots.policy.enabled())
      throw RecipeError(both + " computes its PCA from this run's stage-1 snapshots, and [snapshots] saves none; "
                        "set [snapshots] every_steps or every_epochs (and from_epoch before " +
                        std::to_string(s.dim_reduce.from_epoch) + ")");
    if (s.dim_reduce.snapshots.empty() && s.snapshots.policy.from_epoch >= s.dim_reduce.from_epoch)
      throw RecipeError(both + " but [snapshots] from_epoch = " + std::to_string(s.snapshots.policy.from_epoch) +
                        ": stage 1 would save no snapshot before stage 2 starts; set [snapshots] from_epoch below " +
                        std::to_string(s.dim_reduce.from_epoch));
  }
}

}  // namespace

Settings settings_of(const Recipe& recipe) {
  Settings s;
  s.run = run_keys().read(recipe.table("run").core);
  if (s.run.name.empty()) s.run.name = recipe.run_name();
  s.data_plugin = recipe.table("data").plugin;
  s.data_params = recipe.table("data").component;
  s.preprocessing_plugin = recipe.table("preprocessing").plugin;
  s.preprocessing_params = recipe.table("preprocessing").component;
  const auto& model = recipe.table("model");
  s.model_plugin = model.plugin;
  s.model_params = model.component;
  model_keys().read(model.core, s);
  loss_keys().read(recipe.table("loss").core, s);
  s.optimizer = optimizer_settings(recipe.table("optimizer"));
  const auto& schedule = recipe.table("schedule");
  s.schedule = schedule_keys().read(schedule.core);
  s.schedule.plugin = schedule.plugin;
  s.schedule.params = schedule.component;
  s.precision = precision_keys().read(recipe.table("precision").core);
  s.eval = eval_keys().read(recipe.table("eval").core);
  s.checkpoint = checkpoint_keys().read(recipe.table("checkpoint").core);
  s.export_ = export_keys().read(recipe.table("export").core);
  s.distributed = distributed_keys().read(recipe.table("distributed").core);
  for (const auto& hook : recipe.table("hooks").list("hooks")) s.hooks.push_back({hook.plugin, hook.component});
  const auto& compression = recipe.table("gradient_compression");
  s.compression = {compression.plugin, compression.component};
  s.snapshots = snapshots_keys().read(recipe.table("snapshots").core);
  s.dim_reduce = dim_reduce_keys().read(recipe.table("dim_reduce").core);
  check_dim_reduce(s, recipe.path);
  log_keys().read(recipe.table("log").core, s);
  return s;
}

}  // namespace orchestrate
