// Does everything the headers describe lie inside the file? A truncated file
// fails here, and so does a flipped byte in an offset or size.
#pragma once

#include <string>

#include "plugin_file/elf_image.h"

namespace orchestrate::plugin_file {

// Needs image.header (check_identity); fills image.segments. "" when fine.
std::string check_extents(ElfImage& image);

}  // namespace orchestrate::plugin_file
