// Nesting-depth checks that run on the raw text before a recursive parser
// sees it, so a hostile file is refused with a located one-line error instead
// of overflowing the stack (orchestrate::limits::kMaxNesting).
#pragma once

#include <string>
#include <string_view>

namespace orchestrate {

// Throws RecipeError("<where>:<line>:<column>: ...") when a TOML document
// nests deeper than kMaxNesting, or holds a control character (TOML allows
// none but tab and line ends; toml++ 3.3 asserts on a NUL in a table
// header). Other syntax errors are left to the TOML parser: the scan stops
// at what it cannot read.
void check_toml_text(std::string_view text, const std::string& where);

// Throws DataError("<where>: ...") when a JSON document nests deeper than
// kMaxNesting. Syntax errors are left to the JSON parser.
void check_json_nesting(std::string_view text, const std::string& where);

}  // namespace orchestrate
