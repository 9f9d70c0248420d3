#include "sweep/toml_value_text.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace orchestrate::sweep {

std::string real_text(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // Shortest round trip, in plain digits where people read them so
  // (0.0005, not 5e-04), with an exponent for the very small and large.
  char buffer[400];
  const double size = std::abs(value);
  const bool plain = value == 0 || (size >= 1e-5 && size < 1e15);
  const auto result = plain ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed)
                            : std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";  // a float, not an integer, to TOML
  return text;
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04X", c);
      out += escape;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace orchestrate::sweep
