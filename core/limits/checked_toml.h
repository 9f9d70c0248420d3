// toml++ as orchestrate uses it. Its parser is compiled once, in
// checked_toml.cpp, with toml++'s internal assertions raised as
// toml::parse_error: Debian's build (3.3) compiles them to assumptions
// under NDEBUG, so a document that trips one (fuzzing found "[}" and a
// newline inside a table header) was undefined behaviour, not an error.
// Include this instead of <toml++/toml.h>.
#pragma once

#include <string_view>

#include <toml++/toml.h>

namespace orchestrate {

// toml::parse, with any internal assertion of toml++ reported as a
// toml::parse_error at the start of the document. Run check_toml_text
// (nesting_check.h) on the text first.
toml::table parse_toml(std::string_view text, std::string_view source_path);

}  // namespace orchestrate
