// A fresh directory under the system's temporary directory ($TMPDIR),
// removed with everything in it when the object goes.
#pragma once

#include <filesystem>
#include <string>

#include "orchestrate/api.h"

namespace orchestrate {

class ORCHESTRATE_API TemporaryDirectory {
 public:
  // `purpose` names it (orchestrate-<purpose>-XXXXXX) and the command in the
  // Error thrown when it cannot be made.
  explicit TemporaryDirectory(const std::string& purpose);
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace orchestrate
