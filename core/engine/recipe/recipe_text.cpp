// The resolved recipe as text: TOML for --dry-run and the run record, and
// flattened "table.key" rows for the run store. Both use to_display(), the
// one value serializer, whose floats read back bit for bit.
#include <filesystem>
#include "store/run_store.h"
#include <sstream>

#include "engine/recipe/core_tables.h"
#include "engine/recipe/recipe.h"

namespace orchestrate {

namespace {

// Calls emit(key, value) for the table's plugin, core keys, then component keys.
template <class Emit>
void each_value(const TableValues& values, Emit emit) {
  if (!values.plugin.empty()) emit("plugin", ParamValue(values.plugin));
  for (const auto& [key, value] : values.core.values()) emit(key, value);
  for (const auto& [key, value] : values.component.values()) emit(key, value);
}

void write_table(std::ostream& out, const TableSpec& spec, const TableValues& values, const std::string& path,
                 bool is_list_entry) {
  out << "\n" << (is_list_entry ? "[[" : "[") << path << (is_list_entry ? "]]" : "]") << "\n";
  each_value(values, [&](const std::string& key, const ParamValue& value) {
    out << key << " = " << to_display(value) << "\n";
  });
  for (const auto& list : spec.lists)
    for (const auto& entry : values.list(list.name)) write_table(out, list, entry, path + "." + list.name, true);
}

void flatten_table(std::vector<std::pair<std::string, std::string>>& out, const TableSpec& spec,
                   const TableValues& values, const std::string& prefix) {
  each_value(values, [&](const std::string& key, const ParamValue& value) {
    // Strings are stored as the string itself, not TOML-quoted.
    out.emplace_back(prefix + key,
                     std::holds_alternative<std::string>(value) ? std::get<std::string>(value) : to_display(value));
  });
  for (const auto& list : spec.lists) {
    const auto& entries = values.list(list.name);
    for (std::size_t i = 0; i < entries.size(); ++i)
      flatten_table(out, list, entries[i], prefix + list.name + "." + std::to_string(i) + ".");
  }
}

}  // namespace

std::string Recipe::resolved_toml() const {
  std::ostringstream out;
  out << "schema_version = " << kRecipeSchemaVersion << "\n";
  for (const auto& spec : recipe_tables()) {
    if (!spec.is_array) write_table(out, spec, table(spec.name), spec.name, false);
    else
      for (const auto& entry : table(spec.name).list(spec.name)) write_table(out, spec, entry, spec.name, true);
  }
  return out.str();
}

std::vector<std::pair<std::string, std::string>> Recipe::flattened() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& spec : recipe_tables()) {
    if (!spec.is_array) {
      flatten_table(out, spec, table(spec.name), spec.name + ".");
      continue;
    }
    const auto& entries = table(spec.name).list(spec.name);
    for (std::size_t i = 0; i < entries.size(); ++i)
      flatten_table(out, spec, entries[i], spec.name + "." + std::to_string(i) + ".");
  }
  return out;
}

std::string Recipe::run_name() const {
  const std::string& name = table("run").core.string("name");
  return name.empty() ? std::filesystem::path(path).stem().string() : name;
}

}  // namespace orchestrate
