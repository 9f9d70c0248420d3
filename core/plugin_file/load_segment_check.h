// Can the loader map the loadable segments (PT_LOAD) as described, and does
// everything it then reads at an address lie in memory it mapped? A flipped
// address, size or permission in a program header fails here.
#pragma once

#include <string>

#include "plugin_file/elf_image.h"

namespace orchestrate::plugin_file {

// Needs image.segments (check_extents). "" when fine.
std::string check_load_segments(const ElfImage& image);

// Whether [address, address + size) lies inside the memory of one loadable
// segment whose permissions include `flags` (PF_R, PF_W, PF_X).
bool in_loaded_memory(const ElfImage& image, std::uint64_t address, std::uint64_t size, std::uint32_t flags);

}  // namespace orchestrate::plugin_file
