// Written with glibc's <elf.h> rather than a library: it is two table
// look-ups (the dynamic section, then its string table), and libelf would be
// one more shared library for the front end to load on every query.
#include "cli/elf_runpath.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace orchestrate::cli {
namespace {

template <typename T>
bool read_at(std::ifstream& in, std::uint64_t offset, T* out, std::size_t count = 1) {
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(sizeof(T) * count));
  return static_cast<bool>(in);
}

std::vector<std::string> split_colons(const std::string& text) {
  std::vector<std::string> parts;
  std::istringstream stream(text);
  for (std::string part; std::getline(stream, part, ':');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

}  // namespace

std::vector<std::string> elf_runpath(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  Elf64_Ehdr header{};
  if (!read_at(in, 0, &header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_shentsize != sizeof(Elf64_Shdr))
    return {};
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  if (sections.empty() || !read_at(in, header.e_shoff, sections.data(), sections.size())) return {};
  for (const auto& section : sections) {
    if (section.sh_type != SHT_DYNAMIC || section.sh_link >= sections.size()) continue;
    std::vector<Elf64_Dyn> entries(section.sh_size / sizeof(Elf64_Dyn));
    if (entries.empty() || !read_at(in, section.sh_offset, entries.data(), entries.size())) return {};
    const Elf64_Shdr& strings = sections[section.sh_link];
    std::uint64_t runpath = 0, rpath = 0;
    bool has_runpath = false, has_rpath = false;
    for (const auto& entry : entries) {
      if (entry.d_tag == DT_RUNPATH) runpath = entry.d_un.d_val, has_runpath = true;
      if (entry.d_tag == DT_RPATH) rpath = entry.d_un.d_val, has_rpath = true;
    }
    if (!has_runpath && !has_rpath) return {};
    const std::uint64_t offset = has_runpath ? runpath : rpath;  // the loader ignores DT_RPATH beside DT_RUNPATH
    if (offset >= strings.sh_size) return {};
    std::string text(strings.sh_size - offset, '\0');
    if (!read_at(in, strings.sh_offset + offset, text.data(), text.size())) return {};
    return split_colons(text.c_str());
  }
  return {};
}

}  // namespace orchestrate::cli
