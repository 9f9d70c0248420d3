#include "engine/recipe/param_conversion.h"


namespace orchestrate {

std::string toml_type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "integer";
    case toml::node_type::floating_point: return "float";
    case toml::node_type::boolean: return "bool";
    case toml::node_type::array: return "array";
    case toml::node_type::table: return "table";
    default: return "date/time";
  }
}

namespace {

std::optional<std::int64_t> as_integer(const toml::node& node) {
  if (auto v = node.value_exact<std::int64_t>()) return *v;
  return std::nullopt;
}

std::optional<double> as_real(const toml::node& node) {
  if (node.is_floating_point()) return node.value_exact<double>();
  if (node.is_integer()) return static_cast<double>(*node.value_exact<std::int64_t>());
  return std::nullopt;
}

template <class T, class Convert>
std::optional<ParamValue> list_from_toml(const toml::node& node, Convert convert, std::string& why,
                                         const char* element) {
  const auto* array = node.as_array();
  if (!array) {
    why = std::string("expected a list of ") + element + ", got " + toml_type_name(node);
    return std::nullopt;
  }
  std::vector<T> out;
  for (const auto& item : *array) {
    auto v = convert(item);
    if (!v) {
      why = std::string("expected a list of ") + element + ", but element " + std::to_string(out.size() + 1) +
            " is " + toml_type_name(item);
      return std::nullopt;
    }
    out.push_back(*v);
  }
  return ParamValue(std::move(out));
}

}  // namespace

std::optional<ParamValue> value_from_toml(const ParamSpec& spec, const toml::node& node, std::string& why) {
  auto mismatch = [&](const char* expected) -> std::optional<ParamValue> {
    why = std::string("expected ") + expected + ", got " + toml_type_name(node);
    return std::nullopt;
  };
  switch (spec.type) {
    case ParamType::boolean:
      if (auto v = node.value_exact<bool>()) return ParamValue(*v);
      return mismatch("a bool");
    case ParamType::integer:
      if (auto v = as_integer(node)) return ParamValue(*v);
      return mismatch("an integer");
    case ParamType::real:
      if (auto v = as_real(node)) return ParamValue(*v);
      return mismatch("a float");
    case ParamType::string:
      if (auto v = node.value_exact<std::string>()) return ParamValue(*v);
      return mismatch("a string");
    case ParamType::integer_list: return list_from_toml<std::int64_t>(node, as_integer, why, "integers");
    case ParamType::real_list: return list_from_toml<double>(node, as_real, why, "floats");
    case ParamType::string_list:
      return list_from_toml<std::string>(
          node, [](const toml::node& n) { return n.value_exact<std::string>(); }, why, "strings");
  }
  return std::nullopt;
}

}  // namespace orchestrate
