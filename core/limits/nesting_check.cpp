// Written by hand: toml++ limits only inline values (TOML_MAX_NESTED_VALUES),
// not dotted keys or [a.b.c] headers, and tears a deep tree down
// recursively; nlohmann::json prints recursively. Neither parser offers a
// depth limit for those, so a small lexer measures the depth first. It only
// needs to know where strings, comments and keys are; everything else is the
// real parsers' business.
#include "limits/nesting_check.h"

#include <cctype>
#include <cstdio>

#include "orchestrate/error.h"
#include "orchestrate/input_limits.h"

namespace orchestrate {
namespace {

using limits::kMaxNesting;

class TomlNestingScan {
 public:
  TomlNestingScan(std::string_view text, const std::string& where) : text_(text), where_(where) {}

  void run() {
    while (!at_end()) {
      skip_blanks();
      if (at_end()) break;
      const char c = peek();
      if (c == '\n' || c == '\r') {
        advance();
      } else if (c == '#') {
        skip_comment();
      } else if (c == '[') {
        table_header();
      } else {
        key_value(0 /* the current table's depth is added by count() */, true);
        skip_rest_of_line();
      }
    }
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek(std::size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  void advance() {
    // TOML keys and whitespace are ASCII; a non-ASCII byte belongs in a
    // string or a comment. toml++ 3.3 reaches an "unreachable" branch
    // classifying some of them (U+FEDF), so they are refused here.
    if (!in_text_ && static_cast<unsigned char>(text_[pos_]) >= 0x80)
      throw RecipeError(where_ + ":" + std::to_string(line_) + ":" + std::to_string(column_) +
                        ": TOML syntax error: a non-ASCII character outside a quoted string or a comment; quote it");
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }
  bool starts_with(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }

  void skip_blanks() {
    while (!at_end() && (peek() == ' ' || peek() == '\t')) advance();
  }
  void skip_comment() {
    in_text_ = true;
    while (!at_end() && peek() != '\n') advance();
    in_text_ = false;
  }
  // Inside arrays values may span lines, with comments between them.
  void skip_blanks_and_newlines() {
    while (!at_end()) {
      const char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        advance();
      else if (c == '#')
        skip_comment();
      else
        break;
    }
  }
  void skip_rest_of_line() {
    while (!at_end() && peek() != '\n') {
      if (peek() == '#')
        skip_comment();
      else if (peek() == '"' || peek() == '\'')
        skip_string();  // a multi-line string may hold what looks like a newline
      else
        advance();
    }
  }

  // Any of TOML's four string forms; leaves pos_ after the closing quote(s).
  void skip_string() {
    in_text_ = true;
    skip_string_body();
    in_text_ = false;
  }
  void skip_string_body() {
    const char quote = peek();
    const bool basic = quote == '"';
    const std::string_view triple = basic ? std::string_view("\"\"\"") : std::string_view("'''");
    if (starts_with(triple)) {
      for (int i = 0; i < 3; ++i) advance();
      while (!at_end() && !starts_with(triple)) {
        if (basic && peek() == '\\') {
          advance();
          check_after_multi_line_backslash();
        }
        if (!at_end()) advance();
      }
      for (int i = 0; i < 3 && !at_end(); ++i) advance();
      for (int i = 0; i < 2 && peek() == quote; ++i) advance();  // """a"""" ends with a quote in the text
      return;
    }
    advance();
    while (!at_end() && peek() != quote && peek() != '\n') {
      if (basic && peek() == '\\') advance();
      if (!at_end()) advance();
    }
    if (!at_end() && peek() == quote) advance();
  }

  static bool starts_key(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '"' || c == '\'';
  }

  // toml++ 3.3 asks whether the character after a backslash in a multi-line
  // basic string (and, after a line-ending backslash, the first one past the
  // skipped whitespace) is Unicode whitespace, and for many non-ASCII
  // characters (U+00A1 to U+049D among them) that question reaches an
  // "unreachable" branch: undefined behaviour. Found by fuzzing.
  void check_after_multi_line_backslash() {
    std::size_t ahead = 0;
    while (peek(ahead) == ' ' || peek(ahead) == '\t' || peek(ahead) == '\n' || peek(ahead) == '\r') ++ahead;
    if (static_cast<unsigned char>(peek(ahead)) < 0x80) return;
    throw RecipeError(where_ + ":" + std::to_string(line_) + ":" + std::to_string(column_) +
                      ": TOML syntax error: a non-ASCII character right after a backslash in a multi-line string, "
                      "which the TOML parser cannot read; move it before the backslash or write it as \\uXXXX");
  }

  // A key: dotted segments, bare or quoted. Returns how many segments.
  int key() {
    int segments = 0;
    while (!at_end()) {
      skip_blanks();
      if (peek() == '"' || peek() == '\'') {
        skip_string();
      } else {
        while (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_' || peek() == '-'))
          advance();
      }
      ++segments;
      skip_blanks();
      if (peek() != '.') break;
      advance();
    }
    return segments;
  }

  void check(int depth) {
    if (depth <= kMaxNesting) return;
    throw RecipeError(where_ + ":" + std::to_string(line_) + ":" + std::to_string(column_) +
                      ": nested deeper than " + std::to_string(kMaxNesting) +
                      " levels (tables, dotted keys, arrays and inline tables together); a recipe needs a few, so "
                      "this file is damaged or not a recipe");
  }

  void table_header() {
    advance();
    const bool array_of_tables = peek() == '[';
    if (array_of_tables) advance();
    // toml++ 3.3 asserts (in a release build: assumes) that a header's name
    // starts here, so anything else is refused before it parses.
    skip_blanks();
    if (!starts_key(peek()))
      throw RecipeError(where_ + ":" + std::to_string(line_) + ":" + std::to_string(column_) +
                        ": TOML syntax error: a table header needs a name after '[', e.g. [run]");
    table_depth_ = key() + (array_of_tables ? 1 : 0);
    check(table_depth_);
    skip_rest_of_line();
  }

  // key = value, at `depth` inside the current table (top_level) or an inline table.
  void key_value(int depth, bool top_level) {
    const int segments = key();
    const int here = depth + segments + (top_level ? table_depth_ : 0);
    check(here);
    skip_blanks();
    if (peek() != '=') return;  // a syntax error: the TOML parser will say where
    advance();
    skip_blanks();
    value(here);
  }

  void value(int depth) {
    const char c = peek();
    if (c == '"' || c == '\'') {
      skip_string();
    } else if (c == '[') {
      container(depth + 1, ']', false);
    } else if (c == '{') {
      container(depth + 1, '}', true);
    } else {
      // numbers, booleans, dates (which may hold a space): up to what ends a value
      while (!at_end() && peek() != ',' && peek() != ']' && peek() != '}' && peek() != '\n' && peek() != '#') advance();
    }
  }

  // An array (values) or an inline table (key = value pairs); recursion is
  // bounded because check() refuses a depth past kMaxNesting first.
  void container(int depth, char close, bool inline_table) {
    check(depth);
    advance();
    while (!at_end()) {
      skip_blanks_and_newlines();
      if (at_end() || peek() == close) break;
      if (inline_table) {
        key_value(depth, false);
      } else {
        // toml++ 3.3 asserts that an array's value does not start with these.
        if (peek() == ',' || peek() == '}')
          throw RecipeError(where_ + ":" + std::to_string(line_) + ":" + std::to_string(column_) +
                            ": TOML syntax error: expected a value in the array, found '" + std::string(1, peek()) + "'");
        value(depth);
      }
      skip_blanks_and_newlines();
      if (peek() == ',') {
        advance();
        continue;
      }
      break;  // the close, or a syntax error left to the parser
    }
    if (!at_end() && peek() == close) advance();
  }

  std::string_view text_;
  const std::string& where_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
  int table_depth_ = 0;  // segments of the last [table] or [[array]] header
  bool in_text_ = false;  // inside a string or a comment, where any UTF-8 may stand
};

}  // namespace

void check_toml_text(std::string_view text, const std::string& where) {
  int line = 1, column = 1;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\t' && c != '\n' && c != '\r') || byte == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "U+%04X", byte);
      throw RecipeError(where + ":" + std::to_string(line) + ":" + std::to_string(column) + ": control character " +
                        code + " is not allowed in TOML; the file is damaged or not a text file");
    }
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  TomlNestingScan(text, where).run();
}

void check_json_nesting(std::string_view text, const std::string& where) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting)
        throw DataError(where + ": JSON nested deeper than " + std::to_string(kMaxNesting) + " levels at byte " +
                        std::to_string(i) + "; the file is damaged or was not written for orchestrate");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

}  // namespace orchestrate
