// A fresh directory under the system temp directory, removed with the object,
// so tests never share or leave behind files. Shared by every test target.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace orchestrate::testing {

// A file's bytes ("" if it cannot be read): to check that a command left a file exactly as it was.
inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("orchestrate_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes `text` to the file `name` here and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = file(name);
    std::ofstream(path) << text;
    return path;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace orchestrate::testing
