// A table of text cells and the three ways the CLI prints one: aligned text
// for people, CSV and JSON for other programs.
#pragma once

#include <string>
#include <vector>

namespace orchestrate {

struct Table {
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;  // each as long as headers
};

enum class TableFormat { table, csv, json };

// "table", "csv" or "json"; anything else is a UsageError listing them.
TableFormat parse_table_format(const std::string& name);

// table: columns separated by two spaces, a rule of dashes under the headers,
//        numeric columns right-aligned, no trailing spaces.
// csv:   RFC 4180: CRLF line ends; a field with a comma, quote or line break is
//        quoted and its quotes doubled.
// json:  an array of objects keyed by header, in header order; a cell that
//        parses as a finite number is a JSON number, an empty cell is null.
// Every format ends with a newline.
std::string render(const Table& table, TableFormat format);

// A number as a cell: `decimals` digits after the point; nan, inf, -inf spelled out.
std::string fixed(double value, int decimals);

}  // namespace orchestrate
