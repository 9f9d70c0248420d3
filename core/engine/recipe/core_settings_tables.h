// The core recipe tables' keys, each bound to the typed Settings field it
// fills (settings_table.h): the one place a core key's name, type, default,
// range and doc are written. core_tables.cpp takes their schemas,
// settings.cpp reads with them.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/recipe/settings.h"
#include "engine/recipe/settings_table.h"

namespace orchestrate {

// A recipe may carry its own sweep spec in this table (core/sweep/sweep_spec.h):
// `orchestrate sweep RECIPE` reads it, `orchestrate run` leaves it alone.
inline constexpr std::string_view kSweepTable = "sweep";

const SettingsTable<RunSettings>& run_keys();
const SettingsTable<Settings>& model_keys();  // [model] memory_format
const SettingsTable<Settings>& loss_keys();
const SettingsTable<OptimizerSettings>& optimizer_keys();
const SettingsTable<ParameterGroupRule>& group_keys();  // [[optimizer.groups]]
const SettingsTable<ScheduleSettings>& schedule_keys();
const SettingsTable<PrecisionSettings>& precision_keys();
const SettingsTable<EvalSettings>& eval_keys();
const SettingsTable<CheckpointSettings>& checkpoint_keys();
const SettingsTable<ExportSettings>& export_keys();
const SettingsTable<Settings>& log_keys();
const SettingsTable<DistributedSettings>& distributed_keys();
const SettingsTable<SnapshotSettings>& snapshots_keys();
const SettingsTable<DimReduceSettings>& dim_reduce_keys();

// Every bound core key of `settings` as "table.key" and its value, in table
// order: what a test compares with the schemas' defaults.
std::vector<std::pair<std::string, ParamValue>> core_setting_values(const Settings& settings);

// Every core table's name and schema, in the same order.
std::vector<std::pair<std::string, const ParamSchema*>> core_setting_schemas();

// The plugin a component table names when the recipe names none
// (core_tables.cpp's component tables); "" where the recipe must name one.
const std::vector<std::pair<std::string, std::string>>& default_plugins();
std::string default_plugin(const std::string& table);

}  // namespace orchestrate
