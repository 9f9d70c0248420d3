#include "param_conversion.h"

#include <charconv>
#include <cstdlib>

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

namespace {

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

std::optional<std::int64_t> parse_integer(const std::string& text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

std::optional<double> parse_real(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

std::string unquote(const std::string& text) {
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') && text.back() == text.front())
    return text.substr(1, text.size() - 2);
  return text;
}

std::vector<std::string> split_list(const std::string& text) {
  std::string body = trim(text);
  if (body.size() >= 2 && body.front() == '[' && body.back() == ']') body = body.substr(1, body.size() - 2);
  std::vector<std::string> items;
  if (trim(body).empty()) return items;
  size_t start = 0;
  while (true) {
    size_t comma = body.find(',', start);
    items.push_back(unquote(trim(body.substr(start, comma - start))));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

template <class T, class Parse>
std::optional<ParamValue> list_from_text(const std::string& text, Parse parse, std::string& why, const char* element) {
  std::vector<T> out;
  for (const auto& item : split_list(text)) {
    auto v = parse(item);
    if (!v) {
      why = std::string("expected a list of ") + element + ", but '" + item + "' is not one";
      return std::nullopt;
    }
    out.push_back(*v);
  }
  return ParamValue(std::move(out));
}

}  // namespace

std::optional<ParamValue> value_from_text(const ParamSpec& spec, const std::string& raw, std::string& why) {
  const std::string text = trim(raw);
  auto mismatch = [&](const char* expected) -> std::optional<ParamValue> {
    why = std::string("expected ") + expected + ", got '" + text + "'";
    return std::nullopt;
  };
  switch (spec.type) {
    case ParamType::boolean:
      if (text == "true") return ParamValue(true);
      if (text == "false") return ParamValue(false);
      return mismatch("true or false");
    case ParamType::integer:
      if (auto v = parse_integer(text)) return ParamValue(*v);
      return mismatch("an integer");
    case ParamType::real:
      if (auto v = parse_real(text)) return ParamValue(*v);
      return mismatch("a float");
    case ParamType::string: return ParamValue(unquote(text));
    case ParamType::integer_list: return list_from_text<std::int64_t>(text, parse_integer, why, "integers");
    case ParamType::real_list: return list_from_text<double>(text, parse_real, why, "floats");
    case ParamType::string_list:
      return list_from_text<std::string>(
          text, [](const std::string& s) { return std::optional<std::string>(s); }, why, "strings");
  }
  return std::nullopt;
}

void insert_toml_value(toml::table& table, const std::string& key, const ParamValue& value) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t> || std::is_same_v<T, double> ||
                      std::is_same_v<T, std::string>) {
          table.insert_or_assign(key, v);
        } else {
          toml::array array;
          for (const auto& item : v) array.push_back(item);
          table.insert_or_assign(key, std::move(array));
        }
      },
      value);
}

}  // namespace orchestrate
