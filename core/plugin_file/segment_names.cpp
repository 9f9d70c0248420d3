#include "plugin_file/elf_image.h"

namespace orchestrate::plugin_file {

std::string segment_type_name(std::uint32_t type) {
  switch (type) {
    case PT_NULL: return "NULL";
    case PT_LOAD: return "LOAD";
    case PT_DYNAMIC: return "DYNAMIC";
    case PT_INTERP: return "INTERP";
    case PT_NOTE: return "NOTE";
    case PT_PHDR: return "PHDR";
    case PT_TLS: return "TLS";
    case PT_GNU_EH_FRAME: return "GNU_EH_FRAME";
    case PT_GNU_STACK: return "GNU_STACK";
    case PT_GNU_RELRO: return "GNU_RELRO";
    case PT_GNU_PROPERTY: return "GNU_PROPERTY";
  }
  return "type " + std::to_string(type);
}

std::string segment_label(const ElfImage& image, std::size_t index) {
  return "segment " + std::to_string(index) + " (" + segment_type_name(image.segments[index].p_type) + ")";
}

}  // namespace orchestrate::plugin_file
