#include "engine/recipe/recipe_settings.h"

#include "engine/recipe/core_settings_tables.h"
#include "orchestrate/error.h"
#include "orchestrate/registry.h"

namespace orchestrate {

namespace {

OptimizerSettings optimizer_settings(const TableValues& t, const Registry& registry) {
  OptimizerSettings s = optimizer_keys().read(t.core);
  s.plugin = t.plugin;
  s.params = t.component;
  // The optimizer's own key for the base lr, whatever its name: the one it
  // declares with that role (the host refuses an optimizer without one).
  const ParamSpec* lr = registry.optimizers().get(t.plugin).info.schema.find(ParamRole::learning_rate);
  if (!lr) throw Error("optimizer '" + t.plugin + "' declares no key of role learning_rate");
  s.base_lr = t.component.real(lr->name);
  for (const auto& pattern : s.no_decay_patterns) s.no_decay.emplace_back(pattern);
  for (const auto& group : t.list("groups")) {
    ParameterGroupRule rule = group_keys().read(group.core);
    rule.match = std::regex(rule.pattern);
    s.groups.push_back(std::move(rule));
  }
  for (const auto& wrapper : t.list("wrappers")) s.wrappers.push_back({wrapper.plugin, wrapper.component});
  return s;
}

}  // namespace

const Settings& settings_of(const Recipe& recipe) {
  if (!recipe.settings) throw Error("settings_of: a recipe that load_recipe did not make (a bug)");
  return *recipe.settings;
}

Settings read_settings(const Recipe& recipe, const Registry& registry) {
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
  s.optimizer = optimizer_settings(recipe.table("optimizer"), registry);
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
  log_keys().read(recipe.table("log").core, s);
  return s;
}

}  // namespace orchestrate
