#include "engine/recipe/core_defaults.h"

#include <sstream>

#include "engine/recipe/core_settings_tables.h"
#include "orchestrate/error.h"

namespace orchestrate {

const CoreDefaults& CoreDefaults::builtin() {
  static const CoreDefaults defaults = [] {
    CoreDefaults built;
    for (const auto& [table, schema] : core_setting_schemas())
      for (const ParamSpec& spec : schema->specs())
        if (spec.default_value) built.values_[table + "." + spec.name] = *spec.default_value;
    for (const auto& [table, plugin] : default_plugins()) built.values_[table + ".plugin"] = plugin;
    return built;
  }();
  return defaults;
}

CoreDefaults CoreDefaults::with(const std::string& key, ParamValue value) const {
  const ParamValue& now = this->value(key);
  if (type_of(now) != type_of(value))
    throw Error("core key " + key + " is " + to_string(type_of(now)) + ", not " + to_string(type_of(value)));
  CoreDefaults changed = *this;
  changed.values_[key] = std::move(value);
  return changed;
}

const ParamValue& CoreDefaults::value(const std::string& key) const {
  const auto found = values_.find(key);
  if (found == values_.end()) throw Error("\"" + key + "\" is not a core recipe key with a default");
  return found->second;
}

std::int64_t CoreDefaults::integer(const std::string& key) const {
  const ParamValue& v = value(key);
  if (const auto* integer = std::get_if<std::int64_t>(&v)) return *integer;
  throw Error("core key " + key + " is " + to_string(type_of(v)) + ", not an integer");
}

double CoreDefaults::number(const std::string& key) const {
  const ParamValue& v = value(key);
  if (const auto* integer = std::get_if<std::int64_t>(&v)) return static_cast<double>(*integer);
  if (const auto* real = std::get_if<double>(&v)) return *real;
  throw Error("core key " + key + " is " + to_string(type_of(v)) + ", not a number");
}

const std::string& CoreDefaults::string(const std::string& key) const {
  const ParamValue& v = value(key);
  if (const auto* text = std::get_if<std::string>(&v)) return *text;
  throw Error("core key " + key + " is " + to_string(type_of(v)) + ", not a string");
}

Params CoreDefaults::table(const std::string& table) const {
  Params params;
  const std::string prefix = table + ".";
  for (const auto& [key, value] : values_)
    if (key.compare(0, prefix.size(), prefix) == 0 && key != prefix + "plugin")
      params.set(key.substr(prefix.size()), value);
  return params;
}

std::string CoreDefaults::stored_text(const std::string& key) const {
  const ParamValue& v = value(key);
  return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : to_display(v);
}

std::map<std::string, std::string> CoreDefaults::complete(
    const std::vector<std::pair<std::string, std::string>>& stored) const {
  std::map<std::string, std::string> completed(stored.begin(), stored.end());
  for (const auto& [key, value] : values_)
    if (!completed.count(key)) completed.emplace(key, stored_text(key));
  return completed;
}

std::string CoreDefaults::toml() const {
  std::ostringstream out;
  std::string table;
  for (const auto& [key, value] : values_) {
    const auto dot = key.find('.');
    if (key.substr(0, dot) != table) {
      table = key.substr(0, dot);
      out << "[" << table << "]\n";
    }
    out << key.substr(dot + 1) << " = " << to_display(value) << "\n";
  }
  return out.str();
}

}  // namespace orchestrate
