// A word as a POSIX shell reads it back: as it is when it holds only
// characters no shell treats specially, else in single quotes (a quote
// inside as '\''). For command lines orchestrate records or runs.
#pragma once

#include <string>

#include "orchestrate/api.h"

namespace orchestrate {

ORCHESTRATE_API std::string shell_word(const std::string& word);

}  // namespace orchestrate
