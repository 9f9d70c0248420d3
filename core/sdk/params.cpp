#include "orchestrate/params.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "orchestrate/error.h"

namespace orchestrate {

const char* to_string(ParamType type) {
  switch (type) {
    case ParamType::boolean: return "bool";
    case ParamType::integer: return "int";
    case ParamType::real: return "float";
    case ParamType::string: return "string";
    case ParamType::integer_list: return "list of int";
    case ParamType::real_list: return "list of float";
    case ParamType::string_list: return "list of string";
  }
  return "?";
}

ParamType type_of(const ParamValue& value) { return static_cast<ParamType>(value.index()); }

namespace {

// A TOML basic string: quotes, backslashes and control characters escaped.
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// The shortest text that reads back as the same double (std::to_chars), so
// the stored recipe and its params rows keep every bit of a value.
std::string real_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  std::string s(buffer, result.ptr);
  // Keep floats recognisable as floats in TOML ("1" would read back as an integer).
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

template <class T, class F>
std::string list_text(const std::vector<T>& items, F element) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + element(items[i]);
  return out + "]";
}

}  // namespace

std::string to_display(const ParamValue& value) {
  switch (type_of(value)) {
    case ParamType::boolean: return std::get<bool>(value) ? "true" : "false";
    case ParamType::integer: return std::to_string(std::get<std::int64_t>(value));
    case ParamType::real: return real_text(std::get<double>(value));
    case ParamType::string: return quote(std::get<std::string>(value));
    case ParamType::integer_list:
      return list_text(std::get<std::vector<std::int64_t>>(value), [](std::int64_t v) { return std::to_string(v); });
    case ParamType::real_list: return list_text(std::get<std::vector<double>>(value), real_text);
    case ParamType::string_list: return list_text(std::get<std::vector<std::string>>(value), quote);
  }
  return "?";
}

std::string ParamSpec::path_problem(const ParamValue& value) const {
  const auto* path = std::get_if<std::string>(&value);
  if (must_exist == PathCheck::none || !path || path->empty()) return "";
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(*path, error);
  if (must_exist == PathCheck::existing_directory && !std::filesystem::is_directory(status))
    return "\"" + *path + "\" is not a directory" + (std::filesystem::exists(status) ? "" : " (nothing is there)");
  if (must_exist == PathCheck::existing_file && !std::filesystem::is_regular_file(status))
    return "\"" + *path + "\" is not a file" + (std::filesystem::exists(status) ? "" : " (nothing is there)");
  return "";
}

std::string ParamSpec::check(const ParamValue& value) const {
  auto bound = [&](double v) -> std::string {
    std::ostringstream why;
    if (!std::isfinite(v)) why << "must be finite";
    else if (min && (min_exclusive ? v <= *min : v < *min)) why << "must be " << (min_exclusive ? "> " : ">= ") << *min;
    else if (max && (max_exclusive ? v >= *max : v > *max)) why << "must be " << (max_exclusive ? "< " : "<= ") << *max;
    return why.str();
  };
  switch (type_of(value)) {
    case ParamType::integer: return bound(static_cast<double>(std::get<std::int64_t>(value)));
    case ParamType::real: return bound(std::get<double>(value));
    case ParamType::integer_list:
      for (auto v : std::get<std::vector<std::int64_t>>(value))
        if (auto why = bound(static_cast<double>(v)); !why.empty()) return "every element " + why;
      return {};
    case ParamType::real_list:
      for (auto v : std::get<std::vector<double>>(value))
        if (auto why = bound(v); !why.empty()) return "every element " + why;
      return {};
    case ParamType::string:
      if (!choices.empty()) {
        const auto& s = std::get<std::string>(value);
        for (const auto& c : choices)
          if (c == s) return {};
        std::string allowed;
        for (const auto& c : choices) allowed += (allowed.empty() ? "" : ", ") + c;
        return "must be one of: " + allowed;
      }
      return {};
    default: return {};
  }
}

std::string ParamSpec::range_text() const {
  std::ostringstream out;
  if (min && max) {
    out << (min_exclusive ? "(" : "[") << *min << ", " << *max << (max_exclusive ? ")" : "]");
  } else if (min) {
    out << (min_exclusive ? "> " : ">= ") << *min;
  } else if (max) {
    out << (max_exclusive ? "< " : "<= ") << *max;
  }
  return out.str();
}

namespace {
ParamSpec make(std::string name, ParamType type, std::optional<ParamValue> def, std::string doc) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = type;
  spec.default_value = std::move(def);
  spec.doc = std::move(doc);
  return spec;
}
template <class T>
std::optional<ParamValue> wrap(std::optional<T> v) {
  return v ? std::optional<ParamValue>(ParamValue(std::move(*v))) : std::nullopt;
}
}  // namespace

ParamSpec bool_param(std::string name, std::optional<bool> def, std::string doc) {
  return make(std::move(name), ParamType::boolean, wrap(def), std::move(doc));
}
ParamSpec int_param(std::string name, std::optional<std::int64_t> def, std::string doc) {
  return make(std::move(name), ParamType::integer, wrap(def), std::move(doc));
}
ParamSpec real_param(std::string name, std::optional<double> def, std::string doc) {
  return make(std::move(name), ParamType::real, wrap(def), std::move(doc));
}
ParamSpec string_param(std::string name, std::optional<std::string> def, std::string doc) {
  return make(std::move(name), ParamType::string, wrap(std::move(def)), std::move(doc));
}
ParamSpec int_list_param(std::string name, std::optional<std::vector<std::int64_t>> def, std::string doc) {
  return make(std::move(name), ParamType::integer_list, wrap(std::move(def)), std::move(doc));
}
ParamSpec real_list_param(std::string name, std::optional<std::vector<double>> def, std::string doc) {
  return make(std::move(name), ParamType::real_list, wrap(std::move(def)), std::move(doc));
}
ParamSpec string_list_param(std::string name, std::optional<std::vector<std::string>> def, std::string doc) {
  return make(std::move(name), ParamType::string_list, wrap(std::move(def)), std::move(doc));
}

ParamSchema::ParamSchema(std::initializer_list<ParamSpec> specs) {
  for (const auto& spec : specs) add(spec);
}

ParamSchema& ParamSchema::add(ParamSpec spec) {
  if (find(spec.name)) throw std::logic_error("parameter '" + spec.name + "' declared twice in one schema");
  if (spec.default_value && type_of(*spec.default_value) != spec.type)
    throw std::logic_error("parameter '" + spec.name + "': default does not have the declared type");
  specs_.push_back(std::move(spec));
  return *this;
}

ParamSchema& ParamSchema::rule(ParamRule check) {
  rules_.push_back(std::move(check));
  return *this;
}

ParamSchema& ParamSchema::recipe_rule(RecipeRule check) {
  recipe_rules_.push_back(std::move(check));
  return *this;
}

RecipeView::~RecipeView() = default;

std::vector<std::string> ParamSchema::broken_rules(const Params& params) const {
  std::vector<std::string> out;
  for (const auto& check : rules_)
    if (auto why = check(params); !why.empty()) out.push_back(std::move(why));
  return out;
}

const char* to_string(ParamRole role) {
  switch (role) {
    case ParamRole::none: return "none";
    case ParamRole::learning_rate: return "learning_rate";
    case ParamRole::num_classes: return "num_classes";
    case ParamRole::class_list: return "class_list";
    case ParamRole::image_channels: return "image_channels";
    case ParamRole::image_height: return "image_height";
    case ParamRole::image_width: return "image_width";
    case ParamRole::output_side: return "output_side";
    case ParamRole::resize_side: return "resize_side";
  }
  return "?";
}

bool role_fits(ParamRole role, ParamType type) {
  switch (role) {
    case ParamRole::none: return true;
    case ParamRole::learning_rate: return type == ParamType::real;
    case ParamRole::class_list:
      return type == ParamType::integer_list || type == ParamType::real_list || type == ParamType::string_list;
    default: return type == ParamType::integer;
  }
}

const ParamSpec* ParamSchema::find(ParamRole role) const {
  for (const auto& spec : specs_)
    if (spec.role == role) return &spec;
  return nullptr;
}

const ParamSpec* ParamSchema::find(const std::string& name) const {
  for (const auto& spec : specs_)
    if (spec.name == name) return &spec;
  return nullptr;
}

std::vector<std::string> ParamSchema::names() const {
  std::vector<std::string> out;
  for (const auto& spec : specs_) out.push_back(spec.name);
  return out;
}

void Params::set(const std::string& name, ParamValue value) { values_[name] = std::move(value); }

template <class T>
const T& Params::get(const std::string& name) const {
  auto it = values_.find(name);
  // Both cases are bugs in a component (reading a key its schema does not
  // declare, or with another type), not user errors.
  if (it == values_.end()) throw std::logic_error("parameter '" + name + "' is not in the component's schema");
  if (auto* v = std::get_if<T>(&it->second)) return *v;
  throw std::logic_error("parameter '" + name + "' read with the wrong type");
}

bool Params::boolean(const std::string& name) const { return get<bool>(name); }
std::int64_t Params::integer(const std::string& name) const { return get<std::int64_t>(name); }
double Params::real(const std::string& name) const { return get<double>(name); }
const std::string& Params::string(const std::string& name) const { return get<std::string>(name); }
const std::vector<std::int64_t>& Params::integer_list(const std::string& name) const {
  return get<std::vector<std::int64_t>>(name);
}
const std::vector<double>& Params::real_list(const std::string& name) const { return get<std::vector<double>>(name); }
const std::vector<std::string>& Params::string_list(const std::string& name) const {
  return get<std::vector<std::string>>(name);
}

Params default_params(const ParamSchema& schema) {
  Params params;
  std::string missing;
  for (const auto& spec : schema.specs()) {
    if (spec.default_value) params.set(spec.name, *spec.default_value);
    else missing += (missing.empty() ? "" : ", ") + spec.name;
  }
  if (!missing.empty()) throw Error("no default for required parameters: " + missing);
  return params;
}

}  // namespace orchestrate
