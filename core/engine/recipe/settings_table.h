// A core recipe table declared once: each key's name, type, default, range,
// doc and resume safety (a ParamSpec) beside the typed settings field it fills. The
// table's schema (validation, --set, `describe recipe`), the reader that
// fills the settings and the test that an empty recipe resolves to the
// defaults all come from this one list, so no default is written twice.
// Modelled on DALI's OpSchema and torchtitan's JobConfig.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/params.h"

namespace orchestrate {

template <class Settings>
class SettingsTable {
 public:
  // `field(settings)` is the field the key fills: a bool, an integer, a
  // double, a string or a list of strings, converted from the key's type.
  // Every key declared after this call may change on resume (the whole
  // table is outside the training trajectory: [eval], [log], ...).
  SettingsTable& every_key_safe_on_resume() {
    every_key_resume_safe_ = true;
    return *this;
  }

  template <class Field>
  SettingsTable& key(ParamSpec spec, Field field) {
    const std::string name = spec.name;
    if (every_key_resume_safe_) spec.safe_on_resume();
    schema_.add(std::move(spec));
    bindings_.push_back({name,
                         [name, field](const Params& p, Settings& s) { assign(field(s), p, name); },
                         [field](const Settings& s) { return as_value(field(const_cast<Settings&>(s))); }});
    return *this;
  }

  // A string key with a fixed set of choices, read into an enum: `choices`
  // pairs each allowed text with its value, and is the spec's one_of.
  template <class Field, class Enum>
  SettingsTable& choice(ParamSpec spec, Field field, std::vector<std::pair<std::string, Enum>> choices) {
    std::vector<std::string> names;
    for (const auto& [text, value] : choices) names.push_back(text);
    spec.one_of(names);
    if (every_key_resume_safe_) spec.safe_on_resume();
    const std::string name = spec.name;
    schema_.add(std::move(spec));
    bindings_.push_back({name,
                         [name, field, choices](const Params& p, Settings& s) {
                           const std::string& text = p.string(name);
                           for (const auto& [allowed, value] : choices)
                             if (allowed == text) field(s) = value;
                         },
                         [field, choices](const Settings& s) -> ParamValue {
                           for (const auto& [text, value] : choices)
                             if (field(const_cast<Settings&>(s)) == value) return text;
                           return std::string();
                         }});
    return *this;
  }

  // A check over several keys; see ParamSchema::rule.
  SettingsTable& rule(ParamRule check) {
    schema_.rule(std::move(check));
    return *this;
  }

  const ParamSchema& schema() const { return schema_; }

  // Fills every bound field from validated values.
  void read(const Params& params, Settings& settings) const {
    for (const auto& binding : bindings_) binding.read(params, settings);
  }
  Settings read(const Params& params) const {
    Settings settings{};
    read(params, settings);
    return settings;
  }

  // Each key's field in `settings`, as the key's value: what a test compares
  // with the spec's default.
  std::vector<std::pair<std::string, ParamValue>> values(const Settings& settings) const {
    std::vector<std::pair<std::string, ParamValue>> out;
    for (const auto& binding : bindings_) out.emplace_back(binding.key, binding.value(settings));
    return out;
  }

 private:
  struct Binding {
    std::string key;
    std::function<void(const Params&, Settings&)> read;
    std::function<ParamValue(const Settings&)> value;
  };

  template <class Field>
  static void assign(Field& field, const Params& p, const std::string& name) {
    if constexpr (std::is_same_v<Field, bool>) {
      field = p.boolean(name);
    } else if constexpr (std::is_integral_v<Field>) {
      field = static_cast<Field>(p.integer(name));
    } else if constexpr (std::is_floating_point_v<Field>) {
      field = p.real(name);
    } else if constexpr (std::is_same_v<Field, std::string>) {
      field = p.string(name);
    } else {
      static_assert(std::is_same_v<Field, std::vector<std::string>>, "a key fills a bool, number, string or list");
      field = p.string_list(name);
    }
  }

  template <class Field>
  static ParamValue as_value(const Field& field) {
    if constexpr (std::is_same_v<Field, bool>) {
      return field;
    } else if constexpr (std::is_integral_v<Field>) {
      return static_cast<std::int64_t>(field);
    } else if constexpr (std::is_floating_point_v<Field>) {
      return static_cast<double>(field);
    } else {
      return field;
    }
  }

  ParamSchema schema_;
  std::vector<Binding> bindings_;
  bool every_key_resume_safe_ = false;
};

}  // namespace orchestrate
