// Where orchestrate keeps what it can make again: $ORCHESTRATE_CACHE, else
// $XDG_CACHE_HOME/orchestrate, else ~/.cache/orchestrate. Torch-free (the
// SDK's base), so the engine, the front end and plugins agree on it.
#pragma once

#include <string>

#include "orchestrate/api.h"

namespace orchestrate {

// The directory (not created); "" when none of the three variables is set.
ORCHESTRATE_API std::string orchestrate_cache_dir();

}  // namespace orchestrate
