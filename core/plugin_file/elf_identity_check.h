// Is the file a shared library for this very process: its ELF class, byte
// order, type and machine.
#pragma once

#include <string>

#include "plugin_file/elf_image.h"

namespace orchestrate::plugin_file {

// Reads image.header; "" when the file may be loaded here.
std::string check_identity(ElfImage& image);

}  // namespace orchestrate::plugin_file
