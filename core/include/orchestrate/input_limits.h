// Every limit orchestrate puts on input it did not make, declared once.
// share/doc/limits.md lists each with its key and default; a
// limit a user may need to move has a recipe key, whose default is this value.
#pragma once

#include <cstddef>

namespace orchestrate::limits {

// Containers nested inside one another in a TOML recipe (tables, dotted key
// segments, arrays, inline tables) or a JSON file (objects, arrays). The
// deepest shipped recipe nests 4; toml++ and nlohmann recurse on nesting when
// they destroy or print a tree, so a file nesting tens of thousands deep
// would overflow the stack. Refused before parsing.
inline constexpr int kMaxNesting = 64;

// Lines of one error message printed; the rest are counted ("... and N more").
// A recipe with 200,000 unknown keys is one mistake repeated, not 200,000 to read.
inline constexpr std::size_t kMaxErrorLines = 20;

// Bytes of a crash breadcrumb (crash_breadcrumb.h), the note a crashing
// process leaves beside its run store: a header, four numbers and a line
// that names a plugin and its file. A larger file of that name is not one.
inline constexpr std::size_t kMaxCrashBreadcrumbBytes = 8192;

}  // namespace orchestrate::limits
