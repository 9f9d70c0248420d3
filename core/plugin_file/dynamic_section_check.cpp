#include "plugin_file/dynamic_section_check.h"

#include "plugin_file/dynamic_table_rules.h"
#include "plugin_file/load_segment_check.h"

namespace orchestrate::plugin_file {
namespace {

// Entries that are offsets into the string table.
constexpr std::pair<std::int64_t, const char*> kStrings[] = {
    {DT_NEEDED, "DT_NEEDED"}, {DT_SONAME, "DT_SONAME"}, {DT_RPATH, "DT_RPATH"}, {DT_RUNPATH, "DT_RUNPATH"}};

const GElf_Phdr* dynamic_segment(const ElfImage& image) {
  for (const GElf_Phdr& s : image.segments)
    if (s.p_type == PT_DYNAMIC) return &s;
  return nullptr;
}

// Every entry up to DT_NULL; the loader reads until it meets one, so a
// section without it sends the loader past its end.
std::string read_entries(const ElfImage& image, const GElf_Phdr& segment, DynamicEntries& out) {
  const std::uint64_t entry_size = gelf_fsize(image.elf, ELF_T_DYN, 1, EV_CURRENT);
  const std::uint64_t count = segment.p_filesz / entry_size;
  if (count == 0) return "the dynamic section is empty";
  Elf_Data* data =
      elf_getdata_rawchunk(image.elf, static_cast<std::int64_t>(segment.p_offset), count * entry_size, ELF_T_DYN);
  if (data == nullptr) return std::string("unreadable dynamic section (") + elf_errmsg(-1) + ")";
  for (std::uint64_t i = 0; i < count; ++i) {
    GElf_Dyn entry;
    if (gelf_getdyn(data, static_cast<int>(i), &entry) == nullptr)
      return std::string("unreadable dynamic section entry (") + elf_errmsg(-1) + ")";
    if (entry.d_tag == DT_NULL) return "";
    out.emplace(entry.d_tag, entry.d_un.d_val);
  }
  return "the dynamic section has no DT_NULL entry to end it";
}

std::string check_strings(const DynamicEntries& entries) {
  const auto strings_size = entries.find(DT_STRSZ);
  const std::uint64_t limit = strings_size == entries.end() ? 0 : strings_size->second;
  for (const auto& [tag, name] : kStrings) {
    auto [begin, end] = entries.equal_range(tag);
    for (auto it = begin; it != end; ++it)
      if (it->second >= limit)
        return std::string("the dynamic section's ") + name + " (offset " + std::to_string(it->second) +
               ") lies outside its string table (" + std::to_string(limit) + " bytes)";
  }
  return "";
}

}  // namespace

std::string check_dynamic_section(const ElfImage& image) {
  const GElf_Phdr* segment = dynamic_segment(image);
  if (segment == nullptr) return "no dynamic section (PT_DYNAMIC), so not a shared library";
  if (!in_loaded_memory(image, segment->p_vaddr, segment->p_filesz, PF_R))
    return "the dynamic section lies outside the loadable segments";
  DynamicEntries entries;
  if (auto problem = read_entries(image, *segment, entries); !problem.empty()) return problem;
  if (auto problem = check_dynamic_tables(image, entries); !problem.empty()) return problem;
  return check_strings(entries);
}

}  // namespace orchestrate::plugin_file
