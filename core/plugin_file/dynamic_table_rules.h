// The dynamic section's entries that the loader follows into the library:
// each table must be whole, aligned, with entries of the size this loader
// reads, inside mapped memory with the permission the loader needs, and
// with the companion entries it looks up without checking they are there.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "plugin_file/elf_image.h"

namespace orchestrate::plugin_file {

// Tag to value; DT_NEEDED may come more than once.
using DynamicEntries = std::multimap<std::int64_t, std::uint64_t>;

// "" when every table the entries name is fine.
std::string check_dynamic_tables(const ElfImage& image, const DynamicEntries& entries);

}  // namespace orchestrate::plugin_file
