// The one translation unit that compiles toml++'s implementation (the others
// see declarations only: TOML_HEADER_ONLY=0 on the target), with NDEBUG off
// here so that TOML_ASSERT_ASSUME is TOML_ASSERT, and TOML_ASSERT throwing.
#undef NDEBUG
#define TOML_IMPLEMENTATION

#include <stdexcept>
#include <string>

namespace orchestrate {

// What toml++ asserted about a document it is parsing; becomes a parse_error.
class TomlAssertion : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void toml_assertion_failed(const char* condition) {
  throw TomlAssertion(std::string("the TOML parser stopped on malformed input (") + condition + ")");
}

}  // namespace orchestrate

#define TOML_ASSERT(expr) ((expr) ? static_cast<void>(0) : ::orchestrate::toml_assertion_failed(#expr))

#include "limits/checked_toml.h"

#include <memory>

namespace orchestrate {

toml::table parse_toml(std::string_view text, std::string_view source_path) {
  try {
    return toml::parse(text, source_path);
  } catch (const TomlAssertion& assertion) {
    throw toml::parse_error(assertion.what(), toml::source_position{1, 1},
                            std::make_shared<const std::string>(source_path));
  }
}

}  // namespace orchestrate
