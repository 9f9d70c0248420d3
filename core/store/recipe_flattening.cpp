#include "recipe_flattening.h"

#include <array>
#include <charconv>
#include <sstream>

#include <toml++/toml.h>

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

// A value as TOML writes it: the text a user reads in the recipe.
std::string toml_text(const toml::node& node) {
  std::ostringstream out;
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
    flatten(toml::parse(toml_text), "", out);
  } catch (const toml::parse_error& error) {
    throw Error(std::string("stored recipe is not TOML: ") + std::string(error.description()));
  }
  return out;
}

}  // namespace orchestrate
