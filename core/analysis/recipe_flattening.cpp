#include "analysis/recipe_flattening.h"

#include <array>
#include <charconv>
#include <cstdio>
#include <sstream>

#include "limits/checked_toml.h"

#include "limits/nesting_check.h"
#include "orchestrate/error.h"

namespace orchestrate {
namespace {

// The shortest text that reads back as the same double, as people write it:
// "0.1", not toml++'s "0.10000000000000001"; "0.0005", not "5e-04"; a
// number too long without an exponent ("1e-20") keeps it.
std::string shortest_text(double value) {
  constexpr std::size_t kLongestPlain = 12;
  std::array<char, 400> buffer{};  // room for any double in fixed notation
  const auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::fixed);
  if (error == std::errc() && static_cast<std::size_t>(end - buffer.data()) <= kLongestPlain)
    return std::string(buffer.data(), end);
  const auto [short_end, short_error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return short_error == std::errc() ? std::string(buffer.data(), short_end) : std::to_string(value);
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04X", static_cast<unsigned char>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A value as TOML writes it: the text a user reads in the recipe. Written
// here rather than with toml++'s formatter, whose line-width estimate casts
// log10 of a float below 1 to size_t (undefined behaviour that UBSan
// reports for `factors = [1.0, 0.2]`, found by fuzzing). Depth is bounded by
// the nesting check that ran before parsing.
std::string toml_text(const toml::node& node) {
  if (const auto* text = node.as_string()) return quoted(text->get());
  if (const auto* integer = node.as_integer()) return std::to_string(integer->get());
  if (const auto* real = node.as_floating_point()) return shortest_text(real->get());
  if (const auto* flag = node.as_boolean()) return flag->get() ? "true" : "false";
  if (const auto* array = node.as_array()) {
    if (array->empty()) return "[]";
    std::string out = "[ ";  // spaced as toml++ prints it
    for (std::size_t i = 0; i < array->size(); ++i) out += (i ? ", " : "") + toml_text(*array->get(i));
    return out + " ]";
  }
  if (const auto* table = node.as_table()) {
    if (table->empty()) return "{}";
    std::string out;
    for (const auto& [name, child] : *table) out += (out.empty() ? "{ " : ", ") + std::string(name.str()) + " = " + toml_text(child);
    return out + " }";
  }
  std::ostringstream out;  // dates and times: toml++ prints a single value directly
  node.visit([&](const auto& value) { out << value; });
  return out.str();
}

void flatten(const toml::node& node, const std::string& key, std::map<std::string, Cell>& out) {
  if (const auto* table = node.as_table()) {
    for (const auto& [name, child] : *table) flatten(child, key.empty() ? std::string(name.str()) : key + "." + std::string(name.str()), out);
  } else if (const auto* array = node.as_array(); array != nullptr && array->is_array_of_tables()) {
    for (std::size_t i = 0; i < array->size(); ++i) flatten(*array->get(i), key + "." + std::to_string(i), out);
  } else if (const auto* text = node.as_string()) {
    out[key] = text_cell(text->get());
  } else if (const auto* integer = node.as_integer()) {
    out[key] = integer_cell(integer->get());
  } else if (const auto* real = node.as_floating_point()) {
    out[key] = Cell(shortest_text(real->get()), CellType::number);
  } else {
    out[key] = text_cell(toml_text(node));  // booleans, dates, plain arrays
  }
}

}  // namespace

std::map<std::string, Cell> flatten_recipe(const std::string& toml_text) {
  std::map<std::string, Cell> out;
  try {
    check_toml_text(toml_text, "stored recipe");  // flatten() and toml++ recurse on depth
    flatten(parse_toml(toml_text, "stored recipe"), "", out);
  } catch (const RecipeError& error) {
    throw Error(error.what());
  } catch (const toml::parse_error& error) {
    throw Error(std::string("stored recipe is not TOML: ") + std::string(error.description()));
  }
  return out;
}

}  // namespace orchestrate
