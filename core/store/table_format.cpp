#include "table_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "orchestrate/error.h"

namespace orchestrate {
namespace {

bool parses_whole(const std::string& text, auto& value) {
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && stop == end;
}

// from_chars also accepts "inf" and "nan", which JSON has no numbers for.
bool is_number(const std::string& cell) {
  double value = 0;
  return !cell.empty() && parses_whole(cell, value) && std::isfinite(value);
}

// A row shorter than the headers reads as empty cells, so a caller's slip
// prints a blank instead of reading past the end.
const std::string& cell_at(const std::vector<std::string>& row, std::size_t column) {
  static const std::string empty;
  return column < row.size() ? row[column] : empty;
}

std::string render_aligned(const Table& table) {
  const std::size_t columns = table.headers.size();
  std::vector<std::size_t> width(columns);
  std::vector<bool> numeric(columns, true);  // every non-empty cell a number
  for (std::size_t c = 0; c < columns; ++c) {
    width[c] = table.headers[c].size();
    bool any_cell = false;
    for (const auto& row : table.rows) {
      const std::string& cell = cell_at(row, c);
      width[c] = std::max(width[c], cell.size());
      if (cell.empty()) continue;
      any_cell = true;
      numeric[c] = numeric[c] && is_number(cell);
    }
    numeric[c] = numeric[c] && any_cell;
  }

  std::ostringstream out;
  auto write_line = [&](auto&& text_of) {
    std::string line;
    for (std::size_t c = 0; c < columns; ++c) {
      const std::string text = text_of(c);
      const std::string padding(width[c] - text.size(), ' ');
      if (c > 0) line += "  ";
      line += numeric[c] ? padding + text : text + padding;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  };
  write_line([&](std::size_t c) { return table.headers[c]; });
  write_line([&](std::size_t c) { return std::string(width[c], '-'); });
  for (const auto& row : table.rows) write_line([&](std::size_t c) { return cell_at(row, c); });
  return out.str();
}

std::string csv_field(const std::string& cell) {
  if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char ch : cell) {
    if (ch == '"') quoted += '"';
    quoted += ch;
  }
  return quoted + '"';
}

std::string render_csv(const Table& table) {
  std::string out;
  auto write_row = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < table.headers.size(); ++c) {
      if (c > 0) out += ',';
      out += csv_field(cell_at(cells, c));
    }
    out += "\r\n";
  };
  write_row(table.headers);
  for (const auto& row : table.rows) write_row(row);
  return out;
}

nlohmann::ordered_json json_value(const std::string& cell) {
  if (cell.empty()) return nullptr;
  // Integers stay integers ("12", not 12.0).
  std::int64_t integer = 0;
  if (parses_whole(cell, integer)) return integer;
  double real = 0;
  if (parses_whole(cell, real) && std::isfinite(real)) return real;
  return cell;
}

std::string render_json(const Table& table) {
  auto array = nlohmann::ordered_json::array();
  for (const auto& row : table.rows) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (std::size_t c = 0; c < table.headers.size(); ++c) object[table.headers[c]] = json_value(cell_at(row, c));
    array.push_back(std::move(object));
  }
  return array.dump(2) + '\n';
}

}  // namespace

TableFormat parse_table_format(const std::string& name) {
  if (name == "table") return TableFormat::table;
  if (name == "csv") return TableFormat::csv;
  if (name == "json") return TableFormat::json;
  throw UsageError("unknown output format '" + name + "'; use one of: table, csv, json");
}

std::string render(const Table& table, TableFormat format) {
  switch (format) {
    case TableFormat::table: return render_aligned(table);
    case TableFormat::csv: return render_csv(table);
    case TableFormat::json: return render_json(table);
  }
  return render_aligned(table);  // unreachable: every format is handled above
}

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << value;
  return out.str();
}

}  // namespace orchestrate
