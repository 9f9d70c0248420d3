// The classes of an image folder: its sub-folders, in sorted order, each
// holding that class's image files. Class i is the i-th name.
#pragma once

#include <string>
#include <vector>

namespace orchestrate::image_folder {

struct ClassFolder {
  std::string name;
  std::string dir;
  std::vector<std::string> files;  // relative to dir, sorted
};

// A folder with no class folders, or a class folder with no files, is a
// DataError that says so.
std::vector<ClassFolder> read_class_folders(const std::string& dir);

}  // namespace orchestrate::image_folder
