#include "plugin_file/dynamic_table_rules.h"

#include <link.h>

#include "plugin_file/load_segment_check.h"

namespace orchestrate::plugin_file {
namespace {

struct TableRule {
  std::int64_t address_tag;
  const char* name;
  std::int64_t size_tag;        // DT_NULL: the loader learns the size elsewhere
  std::int64_t entry_size_tag;  // DT_NULL: none; else it must be present and equal entry_size
  std::uint64_t entry_size;     // the size must be a multiple of it (0: any)
  std::uint64_t alignment;
  std::uint32_t flags;          // permissions the loader needs where the table lies
};

constexpr std::uint64_t kWord = sizeof(ElfW(Addr));

// The check runs only on files of this build's class (check_identity), so
// the loader's own structure sizes are the ones to hold them to.
constexpr TableRule kRules[] = {
    {DT_STRTAB, "DT_STRTAB", DT_STRSZ, DT_NULL, 0, 1, PF_R},
    {DT_SYMTAB, "DT_SYMTAB", DT_NULL, DT_NULL, 0, alignof(ElfW(Sym)), PF_R},
    {DT_HASH, "DT_HASH", DT_NULL, DT_NULL, 0, 4, PF_R},
    {DT_GNU_HASH, "DT_GNU_HASH", DT_NULL, DT_NULL, 0, kWord, PF_R},
    {DT_RELA, "DT_RELA", DT_RELASZ, DT_RELAENT, sizeof(ElfW(Rela)), alignof(ElfW(Rela)), PF_R},
    {DT_REL, "DT_REL", DT_RELSZ, DT_RELENT, sizeof(ElfW(Rel)), alignof(ElfW(Rel)), PF_R},
    {DT_RELR, "DT_RELR", DT_RELRSZ, DT_RELRENT, kWord, kWord, PF_R},
    {DT_JMPREL, "DT_JMPREL", DT_PLTRELSZ, DT_NULL, 0, kWord, PF_R},
    {DT_PLTGOT, "DT_PLTGOT", DT_NULL, DT_NULL, 0, kWord, PF_W},  // the loader writes its own slots there
    {DT_INIT, "DT_INIT", DT_NULL, DT_NULL, 0, 1, PF_X},
    {DT_FINI, "DT_FINI", DT_NULL, DT_NULL, 0, 1, PF_X},
    {DT_INIT_ARRAY, "DT_INIT_ARRAY", DT_INIT_ARRAYSZ, DT_NULL, kWord, kWord, PF_R},
    {DT_FINI_ARRAY, "DT_FINI_ARRAY", DT_FINI_ARRAYSZ, DT_NULL, kWord, kWord, PF_R},
    {DT_PREINIT_ARRAY, "DT_PREINIT_ARRAY", DT_PREINIT_ARRAYSZ, DT_NULL, kWord, kWord, PF_R},
    {DT_VERSYM, "DT_VERSYM", DT_NULL, DT_NULL, 0, 2, PF_R},
    {DT_VERDEF, "DT_VERDEF", DT_VERDEFNUM, DT_NULL, 0, 4, PF_R},
    {DT_VERNEED, "DT_VERNEED", DT_VERNEEDNUM, DT_NULL, 0, 4, PF_R},
};

std::string hex(std::uint64_t value) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  do out.insert(out.begin(), digits[value % 16]);
  while (value /= 16);
  return "0x" + out;
}

const std::uint64_t* value_of(const DynamicEntries& entries, std::int64_t tag) {
  auto it = entries.find(tag);
  return it == entries.end() ? nullptr : &it->second;
}

std::string check_rule(const ElfImage& image, const DynamicEntries& entries, const TableRule& rule) {
  const std::uint64_t* address = value_of(entries, rule.address_tag);
  const std::uint64_t* size = rule.size_tag == DT_NULL ? nullptr : value_of(entries, rule.size_tag);
  const std::string what = std::string("the dynamic section's ") + rule.name;
  if (!address) {
    if (size) return std::string("the dynamic section gives a size or count for ") + rule.name + " but no address";
    return "";
  }
  if (rule.size_tag != DT_NULL && !size) return what + " has no size or count entry";
  if (rule.entry_size_tag != DT_NULL) {
    const std::uint64_t* entry_size = value_of(entries, rule.entry_size_tag);
    if (!entry_size || *entry_size != rule.entry_size)
      return what + " has entries of " + (entry_size ? std::to_string(*entry_size) : "unstated") +
             " bytes, not " + std::to_string(rule.entry_size);
  }
  // A count (of version records), not a byte size: at least one byte each.
  const bool counts = rule.size_tag == DT_VERDEFNUM || rule.size_tag == DT_VERNEEDNUM;
  const std::uint64_t bytes = size && !counts ? *size : 1;
  if (rule.entry_size && bytes % rule.entry_size)
    return what + " is " + std::to_string(bytes) + " bytes, not a whole number of " +
           std::to_string(rule.entry_size) + "-byte entries";
  if (*address % rule.alignment)
    return what + " at " + hex(*address) + " is not aligned to " + std::to_string(rule.alignment) + " bytes";
  if (!in_loaded_memory(image, *address, bytes, rule.flags))
    return what + " (" + std::to_string(bytes) + " bytes at " + hex(*address) +
           ") lies outside the loadable segments, or where they lack the permission it needs";
  return "";
}

// The entries the loader reads once it knows the tables above are there.
std::string check_companions(const DynamicEntries& entries) {
  if (!value_of(entries, DT_HASH) && !value_of(entries, DT_GNU_HASH))
    return "the dynamic section has no symbol hash table (DT_HASH or DT_GNU_HASH)";
  if (const std::uint64_t* symbol_size = value_of(entries, DT_SYMENT); symbol_size && *symbol_size != sizeof(ElfW(Sym)))
    return "the dynamic section gives symbols of " + std::to_string(*symbol_size) + " bytes, not " +
           std::to_string(sizeof(ElfW(Sym)));
  const std::uint64_t* plt_kind = value_of(entries, DT_PLTREL);
  if (value_of(entries, DT_JMPREL) && !plt_kind) return "the dynamic section's DT_JMPREL has no DT_PLTREL";
  if (plt_kind && *plt_kind != DT_RELA && *plt_kind != DT_REL)
    return "the dynamic section's DT_PLTREL is " + std::to_string(*plt_kind) + ", neither DT_RELA nor DT_REL";
  if (const std::uint64_t* plt_size = value_of(entries, DT_PLTRELSZ); plt_size && plt_kind) {
    const std::uint64_t entry = *plt_kind == DT_RELA ? sizeof(ElfW(Rela)) : sizeof(ElfW(Rel));
    if (*plt_size % entry)
      return "the dynamic section's DT_JMPREL is " + std::to_string(*plt_size) + " bytes, not a whole number of " +
             std::to_string(entry) + "-byte entries";
  }
  if ((value_of(entries, DT_VERNEED) || value_of(entries, DT_VERDEF)) && !value_of(entries, DT_VERSYM))
    return "the dynamic section has symbol versions (DT_VERNEED or DT_VERDEF) but no DT_VERSYM";
  // The loader takes the first DT_RELACOUNT relocations as relative ones without looking.
  for (auto [count_tag, size_tag, entry, name] :
       {std::tuple{DT_RELACOUNT, DT_RELASZ, sizeof(ElfW(Rela)), "DT_RELACOUNT"},
        std::tuple{DT_RELCOUNT, DT_RELSZ, sizeof(ElfW(Rel)), "DT_RELCOUNT"}}) {
    const std::uint64_t* count = value_of(entries, count_tag);
    const std::uint64_t* size = value_of(entries, size_tag);
    if (count && (!size || *count > *size / entry))
      return std::string("the dynamic section's ") + name + " (" + std::to_string(*count) +
             ") exceeds the relocations there are";
  }
  return "";
}

}  // namespace

std::string check_dynamic_tables(const ElfImage& image, const DynamicEntries& entries) {
  // The loader looks every symbol up through these two.
  if (!value_of(entries, DT_STRTAB)) return "the dynamic section has no string table (DT_STRTAB)";
  if (!value_of(entries, DT_SYMTAB)) return "the dynamic section has no symbol table (DT_SYMTAB)";
  for (const TableRule& rule : kRules)
    if (auto problem = check_rule(image, entries, rule); !problem.empty()) return problem;
  return check_companions(entries);
}

}  // namespace orchestrate::plugin_file
