// Values as TOML text for a trial's --set and for people: a real as the
// shortest text that reads back as the same double ("0.1", "1.0", never
// toml++'s "0.10000000000000001"), a string double-quoted with TOML's escapes.
#pragma once

#include <string>

namespace orchestrate::sweep {

std::string real_text(double value);
std::string quoted(const std::string& text);

}  // namespace orchestrate::sweep
