// Directory listing for image folders, sorted byte-wise so the order (and so
// every label and split) is the same on every filesystem and locale.
// POSIX dirent, not std::filesystem: the LibTorch wheel exports its own,
// partly broken, copy of it (pytorch/pytorch#133437).
#pragma once

#include <string>
#include <vector>

namespace orchestrate::image_folder {

struct DirectoryEntries {
  std::vector<std::string> directories;  // names, sorted
  std::vector<std::string> files;        // names, sorted
};

// The entries of `dir`, links followed; names starting with '.' (.DS_Store,
// .ipynb_checkpoints) are left out. A directory that cannot be read is a DataError.
DirectoryEntries list_directory(const std::string& dir);

bool is_directory(const std::string& path);

std::string join_path(const std::string& dir, const std::string& name);

// Every file under `dir`, sub-folders included, as paths relative to `dir`
// ("a.png", "more/b.png"), in sorted order of those relative paths.
std::vector<std::string> files_under(const std::string& dir);

}  // namespace orchestrate::image_folder
