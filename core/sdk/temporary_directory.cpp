#include "orchestrate/temporary_directory.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>

#include "orchestrate/error.h"

namespace orchestrate {

namespace fs = std::filesystem;

TemporaryDirectory::TemporaryDirectory(const std::string& purpose) {
  std::string word = purpose;  // "export onnx" -> orchestrate-export-onnx-XXXXXX
  for (char& ch : word)
    if (ch == ' ' || ch == '/') ch = '-';
  std::string pattern = (fs::temp_directory_path() / ("orchestrate-" + word + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data()))
    throw Error(purpose + ": cannot make a temporary directory in " + fs::temp_directory_path().string() + ": " +
                std::strerror(errno) + " (set TMPDIR to a writable directory)");
  path_ = pattern;
}

TemporaryDirectory::~TemporaryDirectory() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

}  // namespace orchestrate
