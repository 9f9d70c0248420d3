#include "plugin_file/plugin_file_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "plugin_file/dynamic_section_check.h"
#include "plugin_file/elf_extent_check.h"
#include "plugin_file/elf_identity_check.h"
#include "plugin_file/load_segment_check.h"
#include "plugin_file/open_elf.h"

namespace orchestrate {
namespace {

using plugin_file::ElfImage;
using plugin_file::OpenElf;

void start_libelf() {
  // libelf refuses every call until told which ELF version its caller speaks.
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
}

std::string check_image(Elf* elf, std::uint64_t file_size) {
  ElfImage image;
  image.elf = elf;
  image.file_size = file_size;
  // libelf gives up on an ELF identification followed by less than a header.
  if (elf == nullptr) return std::string("truncated or damaged: libelf cannot read the ELF header (") + elf_errmsg(-1) + ")";
  // In order: each check relies on what the ones before it established.
  for (auto check : {plugin_file::check_identity, plugin_file::check_extents})
    if (auto problem = check(image); !problem.empty()) return problem;
  for (auto check : {plugin_file::check_load_segments, plugin_file::check_dynamic_section})
    if (auto problem = check(image); !problem.empty()) return problem;
  return "";
}

}  // namespace

std::string plugin_file_problem(const std::filesystem::path& path) {
  start_libelf();
  OpenElf file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) return std::string("cannot open it (") + std::strerror(errno) + ")";
  struct stat status {};
  if (::fstat(file.fd, &status) != 0) return std::string("cannot read its size (") + std::strerror(errno) + ")";
  if (!S_ISREG(status.st_mode)) return "not a regular file";
  if (status.st_size == 0) return "an empty file";
  // ELF_C_READ reads the parts asked for with pread, never beyond the size
  // the file has now: no mapping that a shorter file would turn into SIGBUS.
  file.elf = elf_begin(file.fd, ELF_C_READ, nullptr);
  return check_image(file.elf, static_cast<std::uint64_t>(status.st_size));
}

std::string plugin_file_problem(const std::uint8_t* bytes, std::size_t size) {
  start_libelf();
  if (size == 0) return "an empty file";
  // elf_memory takes a writable image (it may convert it in place); the caller's stays untouched.
  std::vector<char> copy(bytes, bytes + size);
  OpenElf file;
  file.elf = elf_memory(copy.data(), copy.size());
  return check_image(file.elf, size);
}

}  // namespace orchestrate
