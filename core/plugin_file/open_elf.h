// A file or byte image opened with libelf, closed whichever way its reader
// returns: shared by the checks before dlopen and the build-note reader.
#pragma once

#include <gelf.h>
#include <unistd.h>

namespace orchestrate::plugin_file {

struct OpenElf {
  int fd = -1;
  Elf* elf = nullptr;
  OpenElf() = default;
  OpenElf(const OpenElf&) = delete;
  OpenElf& operator=(const OpenElf&) = delete;
  ~OpenElf() {
    if (elf) elf_end(elf);
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace orchestrate::plugin_file
