// An ELF file opened with libelf, as the checks of plugin_file_check see it.
#pragma once

#include <gelf.h>

#include <cstdint>
#include <string>
#include <vector>

namespace orchestrate::plugin_file {

struct ElfImage {
  Elf* elf = nullptr;
  std::uint64_t file_size = 0;
  GElf_Ehdr header{};
  std::vector<GElf_Phdr> segments;  // filled by check_extents, read by the dynamic-section check
};

// "LOAD", "DYNAMIC", ...: names in messages, so a reader need not know the numbers.
std::string segment_type_name(std::uint32_t type);

// "segment 3 (LOAD)": how messages name a program header.
std::string segment_label(const ElfImage& image, std::size_t index);

// Whether [offset, offset + size) lies within [0, limit), without overflow.
inline bool range_within(std::uint64_t offset, std::uint64_t size, std::uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

}  // namespace orchestrate::plugin_file
