#include "plugin_file/load_segment_check.h"

#include <unistd.h>

namespace orchestrate::plugin_file {
namespace {

constexpr std::uint32_t kKnownFlags = PF_R | PF_W | PF_X | PF_MASKOS | PF_MASKPROC;

// The loader maps the segments in order, each at its place in one
// reservation: segments out of order or overlapping would map one over the
// other.
std::string check_order(const ElfImage& image) {
  const GElf_Phdr* previous = nullptr;
  size_t loads = 0;
  for (size_t i = 0; i < image.segments.size(); ++i) {
    const GElf_Phdr& s = image.segments[i];
    if (s.p_type != PT_LOAD) continue;
    ++loads;
    if (s.p_memsz > ~std::uint64_t{0} - s.p_vaddr)
      return segment_label(image, i) + " has a memory size (" + std::to_string(s.p_memsz) + ") past the address space";
    if (previous && s.p_vaddr < previous->p_vaddr + previous->p_memsz)
      return segment_label(image, i) + " at address " + std::to_string(s.p_vaddr) +
             " overlaps or precedes the loadable segment before it";
    previous = &s;
  }
  return loads ? "" : "no loadable segment (PT_LOAD)";
}

std::string check_permissions(const ElfImage& image) {
  for (size_t i = 0; i < image.segments.size(); ++i) {
    const GElf_Phdr& s = image.segments[i];
    if (s.p_type != PT_LOAD) continue;
    if (s.p_flags & ~kKnownFlags)
      return segment_label(image, i) + " has unknown permission bits (" + std::to_string(s.p_flags) + ")";
    if (s.p_filesz > s.p_memsz)
      return segment_label(image, i) + " has more bytes in the file (" + std::to_string(s.p_filesz) +
             ") than in memory (" + std::to_string(s.p_memsz) + ")";
    // Zero-filled memory (.bss) belongs in writable data; in a read-only
    // segment it would blank part of the code or constants.
    if (s.p_memsz > s.p_filesz && !(s.p_flags & PF_W))
      return segment_label(image, i) + " is read-only but longer in memory (" + std::to_string(s.p_memsz) +
             " bytes) than in the file (" + std::to_string(s.p_filesz) + ")";
  }
  return "";
}

// The loadable segment whose memory holds `address` (they do not overlap: check_order).
const GElf_Phdr* load_segment_holding(const ElfImage& image, std::uint64_t address) {
  for (const GElf_Phdr& s : image.segments)
    if (s.p_type == PT_LOAD && address >= s.p_vaddr && address - s.p_vaddr < s.p_memsz) return &s;
  return nullptr;
}

// Segments the loader (or the unwinder, later) reads at their address once
// the library is mapped, not from the file.
bool read_in_memory(std::uint32_t type) {
  switch (type) {
    case PT_DYNAMIC:
    case PT_NOTE:
    case PT_GNU_PROPERTY:
    case PT_TLS:
    case PT_GNU_EH_FRAME:
    case PT_GNU_RELRO:
    case PT_PHDR: return true;
  }
  return false;
}

// The loader makes the RELRO region read-only by whole pages, from the page
// of its start to the page boundary at or below its end (glibc's
// _dl_protect_relro), so those pages must be mapped by the loadable segment
// that holds its start, a segment mapping whole pages too. lld pads the
// region's end to a page boundary past the segment's last byte: that is
// within the segment's last page, and loads.
bool relro_pages_mapped(const ElfImage& image, const GElf_Phdr& relro) {
  const std::uint64_t page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  const auto page_below = [page](std::uint64_t address) { return address - address % page; };
  if (relro.p_memsz > ~std::uint64_t{0} - relro.p_vaddr) return false;
  const std::uint64_t start = page_below(relro.p_vaddr);
  const std::uint64_t end = page_below(relro.p_vaddr + relro.p_memsz);
  const GElf_Phdr* s = load_segment_holding(image, relro.p_vaddr);
  if (!s) return false;
  const std::uint64_t mapped_end = s->p_vaddr + s->p_memsz;  // no overflow: check_order ran first
  const std::uint64_t mapped_end_page = page_below(mapped_end) + (mapped_end % page ? page : 0);
  return start >= page_below(s->p_vaddr) && end <= mapped_end_page;
}

std::string check_read_in_memory(const ElfImage& image) {
  for (size_t i = 0; i < image.segments.size(); ++i) {
    const GElf_Phdr& s = image.segments[i];
    if (!read_in_memory(s.p_type)) continue;
    // Only the bytes with a file image: a TLS segment's memory size counts
    // its zero-filled part, which is allocated per thread, not mapped.
    const bool mapped = s.p_type == PT_GNU_RELRO ? relro_pages_mapped(image, s)
                                                 : in_loaded_memory(image, s.p_vaddr, s.p_filesz, 0);
    if (!mapped)
      return segment_label(image, i) + " at address " + std::to_string(s.p_vaddr) +
             " lies outside the loadable segments";
  }
  return "";
}

}  // namespace

bool in_loaded_memory(const ElfImage& image, std::uint64_t address, std::uint64_t size, std::uint32_t flags) {
  for (const GElf_Phdr& s : image.segments)
    if (s.p_type == PT_LOAD && address >= s.p_vaddr && range_within(address - s.p_vaddr, size, s.p_memsz))
      return (s.p_flags & flags) == flags;
  return false;
}

std::string check_load_segments(const ElfImage& image) {
  for (auto check : {check_order, check_permissions, check_read_in_memory})
    if (auto problem = check(image); !problem.empty()) return problem;
  return "";
}

}  // namespace orchestrate::plugin_file
