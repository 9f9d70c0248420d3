// A file holding the current input, for parsers that read from a path. One
// per process (libFuzzer's -fork/-jobs workers each get their own), in
// /dev/shm when there is one, so each execution writes memory, not disk.
// Declare it static in the target; it is removed when the process exits.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace orchestrate::fuzz {

class ScratchFile {
 public:
  explicit ScratchFile(const std::string& name)
      : path_(directory() + "/orchestrate-fuzz-" + std::to_string(::getpid()) + "-" + name) {}
  ~ScratchFile() { std::remove(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Rewrites the file with `bytes`; returns its path.
  const std::string& write(const std::uint8_t* bytes, std::size_t size) {
    std::FILE* out = std::fopen(path_.c_str(), "wb");
    // The harness's own fault, not the parser's: let it crash loudly.
    if (!out) throw std::runtime_error(path_ + ": cannot be written");
    if (size != 0) std::fwrite(bytes, 1, size, out);
    std::fclose(out);
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  static std::string directory() {
    if (::access("/dev/shm", W_OK) == 0) return "/dev/shm";
    const char* tmp = std::getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
  }

  std::string path_;
};

}  // namespace orchestrate::fuzz
