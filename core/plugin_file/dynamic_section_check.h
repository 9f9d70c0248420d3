// Is the dynamic section, the loader's table of contents, whole and does it
// point only at memory the loader maps?
#pragma once

#include <string>

#include "plugin_file/elf_image.h"

namespace orchestrate::plugin_file {

// Needs image.segments (check_extents). "" when fine.
std::string check_dynamic_section(const ElfImage& image);

}  // namespace orchestrate::plugin_file
