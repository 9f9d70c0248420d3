// A fresh directory under the system temp directory, removed when the test
// ends, so store tests never share or leave behind database files.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

namespace orchestrate {

class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("orchestrate_store_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { remove_tree(path_); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  // Not std::filesystem::remove_all: the PyPI libtorch.so exports its own
  // copy, which wins symbol lookup in any binary linked to LibTorch (this
  // test is, through the SDK) and calls a libstdc++ 13 function
  // (recursive_directory_iterator::__erase) that Debian 12's libstdc++
  // lacks: a jump to address 0. Deepest paths go first, so directories are
  // empty when removed.
  static void remove_tree(const std::filesystem::path& root) {
    std::error_code ignored;
    std::vector<std::filesystem::path> paths;
    for (std::filesystem::recursive_directory_iterator it(root, ignored), end; !ignored && it != end;
         it.increment(ignored)) {
      paths.push_back(it->path());
    }
    std::sort(paths.begin(), paths.end(), [](const auto& a, const auto& b) { return a.native() > b.native(); });
    for (const auto& path : paths) std::filesystem::remove(path, ignored);
    std::filesystem::remove(root, ignored);
  }

  std::filesystem::path path_;
};

}  // namespace orchestrate
