// A table of cells and the ways the CLI prints one: aligned text and
// Markdown for people, CSV and JSON for other programs.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace orchestrate {

// What JSON makes of a cell. `guess` reads the text: a finite number is a
// number, "" is null, anything else a string; fine for cells that are
// numbers or free text, wrong for text that may look like a number (a run
// named "42"), which is what `text` is for. `object`: the cell's entries, an
// object of strings (a run's tags); `list`: an array of the entries' values;
// `json`: the JSON text in Cell::exact, as it is (a typed default).
enum class CellType { guess, text, number, boolean, object, list, json };

struct Cell {
  Cell() = default;  // empty: null in JSON
  Cell(std::string text) : text(std::move(text)) {}  // NOLINT: implicit, so rows of strings stay rows
  Cell(const char* text) : text(text) {}              // NOLINT
  Cell(std::string text, CellType type) : text(std::move(text)), type(type) {}
  std::string text;  // as printed for people (table, markdown)
  CellType type = CellType::guess;
  // What CSV and JSON carry instead of the text, for programs: a number at
  // full precision (the shortest text that reads back as the same double), a
  // time in ISO-8601 UTC. "": the text.
  std::string exact;
  std::vector<std::pair<std::string, std::string>> entries;  // CellType::object, list (values only)
};

// Always a JSON string, even "42".
Cell text_cell(std::string text);
// `decimals` digits after the point for people, every digit for programs; a
// NaN or infinity prints as nan, inf, -inf and is null in JSON.
Cell number_cell(double value, int decimals);
// A metric's value: 4 decimals, or 4 significant digits in exponent form from
// kMetricExponentFrom on (a peak of 98904131483.8542 FLOP/s reads 9.890e+10).
inline constexpr double kMetricExponentFrom = 1e6;
Cell metric_cell(double value);
Cell integer_cell(std::int64_t value);
// "true" or "false"; a JSON boolean.
Cell bool_cell(bool value);
// An ISO-8601 UTC time as stored ("2026-11-26T11:15:38.226Z"): people see
// "2026-11-26 11:15:38", programs the stored text; "" is null.
Cell time_cell(const std::string& iso);
// Key-value pairs: "k=v, k2=v2" for people and CSV, an object in JSON.
Cell object_cell(std::vector<std::pair<std::string, std::string>> entries);
// `text` for people and CSV, `json_text` (a JSON value) in JSON.
Cell json_cell(std::string text, std::string json_text);
// Strings: joined by "; " for people and CSV, an array in JSON.
Cell list_cell(const std::vector<std::string>& items);

struct Table {
  std::vector<std::string> headers;
  std::vector<std::vector<Cell>> rows;  // each as long as headers
  // Columns left out for people (table, markdown) because no row needs them
  // (a kind column where every run trained). CSV and JSON keep every column,
  // null where a row has no value: a program meets the same keys every time.
  std::set<std::string> hidden_for_people;
  // JSON only: the columns [first, first + count) gathered under one key of
  // each row object, at the place of the first: an object keyed by header
  // (a run's metrics by name), or with `as_array` an array in column order
  // (compare's runs, whose names may repeat). Present even with no columns.
  struct JsonGroup {
    std::string key;
    std::size_t first = 0, count = 0;
    bool as_array = false;
  };
  std::vector<JsonGroup> json_groups;
};

// The columns people see (table, markdown): `table` without its
// hidden_for_people columns.
Table for_people(const Table& table);

enum class TableFormat { table, csv, json, markdown };

// "table", "csv", "json" or "markdown"; anything else is a UsageError listing them.
TableFormat parse_table_format(const std::string& name);

// table: columns separated by two spaces, a rule of dashes under the headers,
//        numeric columns right-aligned, no trailing spaces.
// csv:   RFC 4180: CRLF line ends; a field with a comma, quote or line break is
//        quoted and its quotes doubled.
// json:  an array of objects keyed by header, in header order, each value
//        as its cell's type says (CellType) at full precision (Cell::exact),
//        with the table's json_groups nested.
// markdown: a GitHub-flavoured pipe table, numeric columns right-aligned;
//        '|' in a cell is escaped and a line break becomes <br>.
// Every format ends with a newline.
std::string render(const Table& table, TableFormat format);

// A titled part of a report of several parts (`orchestrate show`): a table,
// a table of fields (two columns, name and value: JSON makes it one object),
// or a block of text (headers and rows empty).
struct Section {
  std::string title;
  Table table;
  bool fields = false;
  std::string text;
};

// table: each title on its own line, then its table or text, a blank line between.
// markdown: "## title", then a pipe table, or the text in a fenced block.
// json: one object keyed by title in snake_case ("resolved recipe" is
//       resolved_recipe): an array of row objects, a fields object, or a string.
// csv has one table per file: a UsageError.
std::string render_sections(const std::vector<Section>& sections, TableFormat format);

// A number as a cell: `decimals` digits after the point; nan, inf, -inf spelled out.
std::string fixed(double value, int decimals);

// A share as whole percent for people: 0.314 -> "31 %".
std::string percent(double share);

// FLOPs or a rate readable at any scale: "16.8 MFLOP", "98.3 GFLOP/s", "612 TFLOP/s"
// (`per`: "" or "/s").
std::string flops_text(double flops, const char* per);

}  // namespace orchestrate
