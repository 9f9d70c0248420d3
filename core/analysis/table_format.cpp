#include "analysis/table_format.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
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
const std::string& cell_at(const std::vector<Cell>& row, std::size_t column) {
  static const std::string empty;
  return column < row.size() ? row[column].text : empty;
}

// What a program gets: the exact form where the cell has one (a json cell's
// JSON text is for JSON alone: CSV gets its text).
const std::string& exact_at(const std::vector<Cell>& row, std::size_t column) {
  if (column < row.size() && !row[column].exact.empty() && row[column].type != CellType::json) return row[column].exact;
  return cell_at(row, column);
}


CellType type_at(const std::vector<Cell>& row, std::size_t column) {
  return column < row.size() ? row[column].type : CellType::guess;
}

bool reads_as_number(const std::vector<Cell>& row, std::size_t column) {
  const CellType type = type_at(row, column);
  return type == CellType::number || (type == CellType::guess && is_number(cell_at(row, column)));
}

// Columns whose every non-empty cell is a number, which read best right-aligned.
std::vector<bool> numeric_columns(const Table& table) {
  std::vector<bool> numeric(table.headers.size(), true);
  for (std::size_t c = 0; c < table.headers.size(); ++c) {
    bool any_cell = false;
    for (const auto& row : table.rows) {
      if (cell_at(row, c).empty()) continue;
      any_cell = true;
      numeric[c] = numeric[c] && reads_as_number(row, c);
    }
    numeric[c] = numeric[c] && any_cell;
  }
  return numeric;
}

std::string render_aligned(const Table& all_columns) {
  const Table table = for_people(all_columns);
  const std::size_t columns = table.headers.size();
  std::vector<std::size_t> width(columns);
  const std::vector<bool> numeric = numeric_columns(table);
  for (std::size_t c = 0; c < columns; ++c) {
    width[c] = table.headers[c].size();
    for (const auto& row : table.rows) width[c] = std::max(width[c], cell_at(row, c).size());
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
  auto write_row = [&](auto&& text_of) {
    for (std::size_t c = 0; c < table.headers.size(); ++c) {
      if (c > 0) out += ',';
      out += csv_field(text_of(c));
    }
    out += "\r\n";
  };
  write_row([&](std::size_t c) { return table.headers[c]; });
  for (const auto& row : table.rows) write_row([&](std::size_t c) { return exact_at(row, c); });
  return out;
}

std::string markdown_field(const std::string& cell) {
  std::string field;
  for (char ch : cell) {
    if (ch == '|') field += "\\|";
    else if (ch == '\n') field += "<br>";
    else if (ch != '\r') field += ch;
  }
  return field;
}

std::string render_markdown(const Table& all_columns) {
  const Table table = for_people(all_columns);
  const std::vector<bool> numeric = numeric_columns(table);
  std::string out;
  auto write_row = [&](auto&& text_of) {
    out += '|';
    for (std::size_t c = 0; c < table.headers.size(); ++c) out += ' ' + text_of(c) + " |";
    out += '\n';
  };
  write_row([&](std::size_t c) { return markdown_field(table.headers[c]); });
  write_row([&](std::size_t c) { return std::string(numeric[c] ? "---:" : "---"); });
  for (const auto& row : table.rows) write_row([&](std::size_t c) { return markdown_field(cell_at(row, c)); });
  return out;
}

nlohmann::ordered_json guessed_json_value(const std::string& cell) {
  if (cell.empty()) return nullptr;
  // Integers stay integers ("12", not 12.0).
  std::int64_t integer = 0;
  if (parses_whole(cell, integer)) return integer;
  double real = 0;
  if (parses_whole(cell, real) && std::isfinite(real)) return real;
  return cell;
}

nlohmann::ordered_json json_value(const std::vector<Cell>& row, std::size_t column) {
  const std::string& text = exact_at(row, column);
  switch (type_at(row, column)) {
    case CellType::text: return text;
    case CellType::number: return is_number(text) ? guessed_json_value(text) : nullptr;  // JSON has no NaN
    case CellType::boolean: return text == "true";
    case CellType::object: {
      nlohmann::ordered_json object = nlohmann::ordered_json::object();
      for (const auto& [key, value] : row[column].entries) object[key] = value;
      return object;
    }
    case CellType::json: return nlohmann::ordered_json::parse(row[column].exact);
    case CellType::list: {
      nlohmann::ordered_json array = nlohmann::ordered_json::array();
      for (const auto& entry : row[column].entries) array.push_back(entry.second);
      return array;
    }
    case CellType::guess: break;
  }
  return guessed_json_value(text);
}

nlohmann::ordered_json json_rows(const Table& table) {
  // Which group, if any, each column belongs to.
  std::vector<const Table::JsonGroup*> group_of(table.headers.size(), nullptr);
  for (const auto& group : table.json_groups)
    for (std::size_t c = group.first; c < group.first + group.count && c < table.headers.size(); ++c) group_of[c] = &group;
  auto array = nlohmann::ordered_json::array();
  for (const auto& row : table.rows) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    const auto open_groups_at = [&](std::size_t c) {
      for (const auto& group : table.json_groups)
        if (group.first == c) object[group.key] = group.as_array ? nlohmann::ordered_json::array()
                                                                  : nlohmann::ordered_json::object();
    };
    for (std::size_t c = 0; c < table.headers.size(); ++c) {
      open_groups_at(c);
      if (!group_of[c]) object[table.headers[c]] = json_value(row, c);
      else if (group_of[c]->as_array) object[group_of[c]->key].push_back(json_value(row, c));
      else object[group_of[c]->key][table.headers[c]] = json_value(row, c);
    }
    open_groups_at(table.headers.size());
    array.push_back(std::move(object));
  }
  return array;
}

std::string render_json(const Table& table) { return json_rows(table).dump(2) + '\n'; }

nlohmann::ordered_json json_section(const Section& section) {
  if (section.table.headers.empty()) return section.text;
  if (!section.fields) return json_rows(section.table);
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (const auto& row : section.table.rows) object[cell_at(row, 0)] = json_value(row, 1);
  return object;
}

// A section's title as a JSON key: "resolved recipe" -> resolved_recipe.
std::string snake_case(const std::string& title) {
  std::string key;
  for (char ch : title) key += (ch == ' ' || ch == '-') ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return key;
}

}  // namespace

TableFormat parse_table_format(const std::string& name) {
  if (name == "table") return TableFormat::table;
  if (name == "csv") return TableFormat::csv;
  if (name == "json") return TableFormat::json;
  if (name == "markdown") return TableFormat::markdown;
  throw UsageError("unknown output format '" + name + "'; use one of: table, csv, json, markdown");
}

std::string render(const Table& table, TableFormat format) {
  switch (format) {
    case TableFormat::table: return render_aligned(table);
    case TableFormat::csv: return render_csv(table);
    case TableFormat::json: return render_json(table);
    case TableFormat::markdown: return render_markdown(table);
  }
  return render_aligned(table);  // unreachable: every format is handled above
}

Table for_people(const Table& table) {
  if (table.hidden_for_people.empty()) return table;
  Table shown;
  std::vector<std::size_t> kept;
  for (std::size_t c = 0; c < table.headers.size(); ++c)
    if (!table.hidden_for_people.count(table.headers[c])) {
      kept.push_back(c);
      shown.headers.push_back(table.headers[c]);
    }
  for (const auto& row : table.rows) {
    std::vector<Cell> cells;
    for (std::size_t c : kept) cells.push_back(c < row.size() ? row[c] : Cell());
    shown.rows.push_back(std::move(cells));
  }
  return shown;
}

Cell text_cell(std::string text) { return {std::move(text), CellType::text}; }

Cell number_cell(double value, int decimals) {
  Cell cell{fixed(value, decimals), CellType::number};
  if (std::isfinite(value)) {
    char digits[32];
    const auto [end, error] = std::to_chars(digits, digits + sizeof digits, value);  // shortest round trip
    if (error == std::errc()) cell.exact.assign(digits, end);
  }
  return cell;
}

Cell metric_cell(double value) {
  Cell cell = number_cell(value, 4);
  if (std::isfinite(value) && std::fabs(value) >= kMetricExponentFrom) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3e", value);
    cell.text = text;
  }
  return cell;
}

Cell time_cell(const std::string& iso) {
  if (iso.empty()) return {};
  // "2026-11-26T11:15:38.226Z" -> "2026-11-26 11:15:38" for people.
  std::string readable = iso.substr(0, 19);
  if (readable.size() > 10 && readable[10] == 'T') readable[10] = ' ';
  Cell cell{readable, CellType::text};
  cell.exact = iso;
  return cell;
}

Cell json_cell(std::string text, std::string json_text) {
  Cell cell{std::move(text), CellType::json};
  cell.exact = std::move(json_text);
  return cell;
}

Cell list_cell(const std::vector<std::string>& items) {
  Cell cell{"", CellType::list};
  for (const auto& item : items) {
    cell.text += (cell.text.empty() ? "" : "; ") + item;
    cell.entries.emplace_back("", item);
  }
  return cell;
}

Cell object_cell(std::vector<std::pair<std::string, std::string>> entries) {
  std::string text;
  for (const auto& [key, value] : entries) text += (text.empty() ? "" : ", ") + key + "=" + value;
  Cell cell{text, CellType::object};
  cell.entries = std::move(entries);
  return cell;
}

Cell integer_cell(std::int64_t value) { return {std::to_string(value), CellType::number}; }

Cell bool_cell(bool value) { return {value ? "true" : "false", CellType::boolean}; }

std::string render_sections(const std::vector<Section>& sections, TableFormat format) {
  if (format == TableFormat::json) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (const Section& section : sections) object[snake_case(section.title)] = json_section(section);
    return object.dump(2) + '\n';
  }
  if (format == TableFormat::csv) throw UsageError("csv holds one table, and this prints several; use table, markdown or json");
  std::string out;
  for (const Section& section : sections) {
    if (!out.empty()) out += '\n';
    const bool text = section.table.headers.empty();
    if (format == TableFormat::markdown) {
      out += "## " + section.title + "\n\n";
      out += text ? "```\n" + section.text + (section.text.ends_with('\n') ? "" : "\n") + "```\n"
                  : render_markdown(section.table);
    } else {
      out += section.title + "\n";
      out += text ? section.text + (section.text.ends_with('\n') ? "" : "\n") : render_aligned(section.table);
    }
  }
  return out;
}

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << value;
  return out.str();
}

std::string percent(double share) { return fixed(100 * share, 0) + " %"; }

std::string flops_text(double flops, const char* per) {
  const char* unit = "MFLOP";
  double scale = 1e6;
  if (flops >= 1e12) unit = "TFLOP", scale = 1e12;
  else if (flops >= 1e9) unit = "GFLOP", scale = 1e9;
  char text[64];
  std::snprintf(text, sizeof text, "%.*f %s%s", flops / scale >= 100 ? 0 : 1, flops / scale, unit, per);
  return text;
}

}  // namespace orchestrate
