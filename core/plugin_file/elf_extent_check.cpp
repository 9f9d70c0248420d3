#include "plugin_file/elf_extent_check.h"

namespace orchestrate::plugin_file {
namespace {

std::string past_the_end(const std::string& what, std::uint64_t offset, std::uint64_t size,
                         std::uint64_t file_size) {
  return "truncated or damaged: " + what + " (" + std::to_string(size) + " bytes at offset " +
         std::to_string(offset) + ") ends past the end of the file (" + std::to_string(file_size) + " bytes)";
}

std::string check_program_headers(ElfImage& image) {
  const GElf_Ehdr& h = image.header;
  // From the header: libelf's elf_getphdrnum counts only the entries that
  // fit in the file, which would hide a truncated table.
  size_t count = h.e_phnum;
  if (count == PN_XNUM && elf_getphdrnum(image.elf, &count) != 0)
    return std::string("unreadable program header count (") + elf_errmsg(-1) + ")";
  if (count == 0) return "no program headers, so nothing the loader could map";
  const std::uint64_t entry_size = gelf_fsize(image.elf, ELF_T_PHDR, 1, EV_CURRENT);
  if (h.e_phentsize != entry_size)
    return "program header entries of " + std::to_string(h.e_phentsize) + " bytes, not " + std::to_string(entry_size);
  if (count > image.file_size / entry_size || !range_within(h.e_phoff, count * entry_size, image.file_size))
    return past_the_end("the program header table", h.e_phoff, count * entry_size, image.file_size);
  image.segments.resize(count);
  for (size_t i = 0; i < count; ++i)
    if (gelf_getphdr(image.elf, static_cast<int>(i), &image.segments[i]) == nullptr)
      return "unreadable program header " + std::to_string(i) + " (" + elf_errmsg(-1) + ")";
  return "";
}

std::string check_segments_in_file(const ElfImage& image) {
  for (size_t i = 0; i < image.segments.size(); ++i) {
    const GElf_Phdr& s = image.segments[i];
    if (!range_within(s.p_offset, s.p_filesz, image.file_size))
      return past_the_end(segment_label(image, i), s.p_offset, s.p_filesz, image.file_size);
  }
  return "";
}

std::string check_sections_in_file(const ElfImage& image) {
  const GElf_Ehdr& h = image.header;
  // libelf treats a section header table cut off by truncation as absent,
  // so its extent is checked here, from the ELF header.
  if (h.e_shoff == 0) return "";  // stripped of section headers: the loader needs none
  const std::uint64_t entry_size = gelf_fsize(image.elf, ELF_T_SHDR, 1, EV_CURRENT);
  const std::uint64_t count = h.e_shnum == 0 ? 1 : h.e_shnum;  // 0: the real count is in section 0
  if (h.e_shentsize != entry_size)
    return "section header entries of " + std::to_string(h.e_shentsize) + " bytes, not " + std::to_string(entry_size);
  if (!range_within(h.e_shoff, count * entry_size, image.file_size))
    return past_the_end("the section header table", h.e_shoff, count * entry_size, image.file_size);
  for (Elf_Scn* section = elf_nextscn(image.elf, nullptr); section; section = elf_nextscn(image.elf, section)) {
    GElf_Shdr s;
    if (gelf_getshdr(section, &s) == nullptr) return std::string("unreadable section header (") + elf_errmsg(-1) + ")";
    if (s.sh_type != SHT_NOBITS && !range_within(s.sh_offset, s.sh_size, image.file_size))
      return past_the_end("section " + std::to_string(elf_ndxscn(section)), s.sh_offset, s.sh_size, image.file_size);
  }
  return "";
}

}  // namespace

std::string check_extents(ElfImage& image) {
  if (auto problem = check_program_headers(image); !problem.empty()) return problem;
  if (auto problem = check_segments_in_file(image); !problem.empty()) return problem;
  return check_sections_in_file(image);
}

}  // namespace orchestrate::plugin_file
