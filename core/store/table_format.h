// A table of cells and the ways the CLI prints one: aligned text and
// Markdown for people, CSV and JSON for other programs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace orchestrate {

// What JSON makes of a cell. `guess` reads the text: a finite number is a
// number, "" is null, anything else a string; fine for cells that are
// numbers or free text, wrong for text that may look like a number (a run
// named "42"), which is what `text` is for.
enum class CellType { guess, text, number, boolean };

struct Cell {
  Cell() = default;  // empty: null in JSON
  Cell(std::string text) : text(std::move(text)) {}  // NOLINT: implicit, so rows of strings stay rows
  Cell(const char* text) : text(text) {}              // NOLINT
  Cell(std::string text, CellType type) : text(std::move(text)), type(type) {}
  std::string text;  // as printed
  CellType type = CellType::guess;
};

// Always a JSON string, even "42".
Cell text_cell(std::string text);
// `decimals` digits after the point; a NaN or infinity prints as nan, inf, -inf and is null in JSON.
Cell number_cell(double value, int decimals);
Cell integer_cell(std::int64_t value);
// "true" or "false"; a JSON boolean.
Cell bool_cell(bool value);

struct Table {
  std::vector<std::string> headers;
  std::vector<std::vector<Cell>> rows;  // each as long as headers
};

enum class TableFormat { table, csv, json, markdown };

// "table", "csv", "json" or "markdown"; anything else is a UsageError listing them.
TableFormat parse_table_format(const std::string& name);

// table: columns separated by two spaces, a rule of dashes under the headers,
//        numeric columns right-aligned, no trailing spaces.
// csv:   RFC 4180: CRLF line ends; a field with a comma, quote or line break is
//        quoted and its quotes doubled.
// json:  an array of objects keyed by header, in header order, each value
//        as its cell's type says (CellType).
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
// json: one object keyed by title: an array of row objects, a fields object, or a string.
// csv has one table per file: a UsageError.
std::string render_sections(const std::vector<Section>& sections, TableFormat format);

// A number as a cell: `decimals` digits after the point; nan, inf, -inf spelled out.
std::string fixed(double value, int decimals);

}  // namespace orchestrate
