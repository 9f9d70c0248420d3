// The core tables as a list (core_settings_tables.h): each table's values and
// schema in recipe order, and the plugin a component table names by default.
// Kept apart from the tables' keys, which fill core_settings_tables.cpp.
#include "engine/recipe/core_settings_tables.h"

namespace orchestrate {

namespace {

// Calls visit(table name, its SettingsTable, the part of `settings` it fills)
// for every core table, in recipe order: the one list of them.
template <class Settings_, class Visit>
void each_core_table(Settings_& s, Visit visit) {
  visit("run", run_keys(), s.run);
  visit("model", model_keys(), s);
  visit("loss", loss_keys(), s);
  visit("optimizer", optimizer_keys(), s.optimizer);
  visit("schedule", schedule_keys(), s.schedule);
  visit("precision", precision_keys(), s.precision);
  visit("eval", eval_keys(), s.eval);
  visit("checkpoint", checkpoint_keys(), s.checkpoint);
  visit("export", export_keys(), s.export_);
  visit("log", log_keys(), s);
  visit("distributed", distributed_keys(), s.distributed);
  visit("snapshots", snapshots_keys(), s.snapshots);
  visit("dim_reduce", dim_reduce_keys(), s.dim_reduce);
}

}  // namespace

std::vector<std::pair<std::string, ParamValue>> core_setting_values(const Settings& settings) {
  std::vector<std::pair<std::string, ParamValue>> out;
  each_core_table(settings, [&](const std::string& table, const auto& keys, const auto& part) {
    for (auto& [key, value] : keys.values(part)) out.emplace_back(table + "." + key, std::move(value));
  });
  return out;
}

std::vector<std::pair<std::string, const ParamSchema*>> core_setting_schemas() {
  std::vector<std::pair<std::string, const ParamSchema*>> out;
  const Settings none{};
  each_core_table(none, [&](const std::string& table, const auto& keys, const auto&) {
    out.emplace_back(table, &keys.schema());
  });
  return out;
}

const std::vector<std::pair<std::string, std::string>>& default_plugins() {
  static const std::vector<std::pair<std::string, std::string>> plugins{
      {"preprocessing", "none"}, {"schedule", "fixed"}, {"gradient_compression", "none"}};
  return plugins;
}

std::string default_plugin(const std::string& table) {
  for (const auto& [name, plugin] : default_plugins())
    if (name == table) return plugin;
  return "";
}

}  // namespace orchestrate
