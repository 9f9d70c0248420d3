#include "plugin_file/plugin_build_note.h"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "plugin_file/open_elf.h"

namespace orchestrate {
namespace {

using plugin_file::OpenElf;

// The layout ORCHESTRATE_PLUGIN writes (plugin.h): owner "orchestrate",
// type 1, then two 32-bit numbers and two NUL-terminated strings.
constexpr char kNoteOwner[] = "orchestrate";
constexpr std::uint32_t kNoteType = 1;
constexpr std::size_t kNumbersSize = 2 * sizeof(std::uint32_t);
// Far beyond a version and a compiler name; a longer note is not ours.
constexpr std::size_t kMaxNoteText = 512;

std::optional<PluginBuild> parse_text(const char* desc, std::size_t size) {
  if (size < kNumbersSize || size > kNumbersSize + kMaxNoteText) return std::nullopt;
  PluginBuild build;
  std::memcpy(&build.api_version, desc, sizeof(std::uint32_t));
  std::memcpy(&build.cxx11_abi, desc + sizeof(std::uint32_t), sizeof(std::uint32_t));
  const char* text = desc + kNumbersSize;
  const std::size_t text_size = size - kNumbersSize;
  const void* first_end = std::memchr(text, '\0', text_size);
  if (!first_end) return std::nullopt;
  build.torch_version.assign(text, static_cast<const char*>(first_end));
  const char* second = static_cast<const char*>(first_end) + 1;
  const std::size_t second_size = text_size - static_cast<std::size_t>(second - text);
  const void* second_end = std::memchr(second, '\0', second_size);
  if (!second_end) return std::nullopt;
  build.compiler.assign(second, static_cast<const char*>(second_end));
  return build;
}

std::optional<PluginBuild> find_note(Elf* elf) {
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) return std::nullopt;
  for (Elf_Scn* section = elf_nextscn(elf, nullptr); section; section = elf_nextscn(elf, section)) {
    GElf_Shdr header;
    if (!gelf_getshdr(section, &header) || header.sh_type != SHT_NOTE) continue;
    Elf_Data* data = elf_getdata(section, nullptr);
    if (!data || !data->d_buf) continue;
    GElf_Nhdr note;
    std::size_t name_at = 0, desc_at = 0;
    // gelf_getnote checks each note against the data's size; 0 ends the list.
    for (std::size_t at = 0; (at = gelf_getnote(data, at, &note, &name_at, &desc_at)) != 0;) {
      const char* bytes = static_cast<const char*>(data->d_buf);
      if (note.n_type != kNoteType || note.n_namesz != sizeof(kNoteOwner) ||
          std::memcmp(bytes + name_at, kNoteOwner, sizeof(kNoteOwner)) != 0)
        continue;
      return parse_text(bytes + desc_at, note.n_descsz);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<PluginBuild> plugin_build_note(const std::filesystem::path& path) {
  elf_version(EV_CURRENT);
  OpenElf file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) return std::nullopt;
  file.elf = elf_begin(file.fd, ELF_C_READ, nullptr);
  return find_note(file.elf);
}

std::optional<PluginBuild> plugin_build_note(const std::uint8_t* bytes, std::size_t size) {
  elf_version(EV_CURRENT);
  if (size == 0) return std::nullopt;
  std::vector<char> copy(bytes, bytes + size);  // elf_memory may convert its image in place
  OpenElf file;
  file.elf = elf_memory(copy.data(), copy.size());
  return find_note(file.elf);
}

}  // namespace orchestrate
