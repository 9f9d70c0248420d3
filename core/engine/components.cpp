#include "components.h"

#include "orchestrate/error.h"
#include "run_identity.h"

namespace orchestrate {

namespace {

template <class Make>
auto guarded(const std::string& table, const std::string& plugin, Make make) {
  try {
    return make();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("[" + table + "] " + plugin + ": " + e.what());
  }
}

}  // namespace

TrainingComponents build_components(const Recipe& recipe, const Registry& registry, const c10::Device& device) {
  TrainingComponents c;
  const auto& data = registry.datasets().get(recipe.data.plugin);
  c.train_set = guarded("data", recipe.data.plugin, [&] { return data.create(recipe.data.params, DatasetSplit::train); });
  if (recipe.eval.boolean("enabled"))
    c.test_set = guarded("data", recipe.data.plugin, [&] { return data.create(recipe.data.params, DatasetSplit::test); });

  const DatasetInfo info = c.train_set->info();
  const ModelInput input{info.channels, info.height, info.width, info.num_classes};
  c.model = guarded("model", recipe.model.plugin,
                    [&] { return registry.models().get(recipe.model.plugin).create(recipe.model.params, input); });
  if (!c.model) throw Error("[model] " + recipe.model.plugin + ": the plugin returned no model (a plugin bug)");
  c.model->to(device);

  c.optimizer = guarded("optimizer", recipe.optimizer.plugin, [&] {
    return registry.optimizers().get(recipe.optimizer.plugin).create(recipe.optimizer.params, c.model->parameters());
  });
  if (!c.optimizer || c.optimizer->param_groups().empty())
    throw Error("[optimizer] " + recipe.optimizer.plugin + ": the plugin returned no optimizer (a plugin bug)");

  const std::int64_t batch_size = recipe.run.integer("batch_size");
  c.steps_per_epoch = c.train_set->size() / batch_size;
  if (c.steps_per_epoch == 0)
    throw Error("[run] batch_size = " + std::to_string(batch_size) + " is larger than the training split (" +
                std::to_string(c.train_set->size()) + " images); lower batch_size");
  const std::int64_t max_steps = recipe.run.integer("max_steps");
  c.total_steps = max_steps > 0 ? max_steps : recipe.run.integer("epochs") * c.steps_per_epoch;
  c.epochs = (c.total_steps + c.steps_per_epoch - 1) / c.steps_per_epoch;

  const double base_lr = c.optimizer->param_groups().front().options().get_lr();
  const ScheduleContext context{base_lr, c.steps_per_epoch, c.total_steps};
  c.schedule = guarded("schedule", recipe.schedule.plugin, [&] {
    return registry.lr_schedules().get(recipe.schedule.plugin).create(recipe.schedule.params, context);
  });
  if (!c.schedule) throw Error("[schedule] " + recipe.schedule.plugin + ": the plugin returned no schedule (a plugin bug)");
  return c;
}

std::vector<PluginRecord> plugins_used(const Recipe& recipe, const Registry& registry) {
  const std::pair<ComponentKind, const std::string*> used[] = {{ComponentKind::dataset, &recipe.data.plugin},
                                                               {ComponentKind::model, &recipe.model.plugin},
                                                               {ComponentKind::optimizer, &recipe.optimizer.plugin},
                                                               {ComponentKind::lr_schedule, &recipe.schedule.plugin}};
  std::vector<PluginRecord> out;
  for (const auto& [kind, name] : used) {
    const std::string& plugin = registry.component(kind, *name).plugin;
    for (const auto& loaded : registry.plugins()) {
      if (loaded.name != plugin) continue;
      bool seen = false;
      for (const auto& r : out) seen = seen || r.name == plugin;
      if (!seen) out.push_back({loaded.name, loaded.version, loaded.library_path, sha256_of_file(loaded.library_path)});
    }
  }
  return out;
}

}  // namespace orchestrate
