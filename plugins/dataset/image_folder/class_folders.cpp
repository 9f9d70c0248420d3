#include "class_folders.h"

#include "folder_listing.h"
#include "orchestrate/error.h"

namespace orchestrate::image_folder {

std::vector<ClassFolder> read_class_folders(const std::string& dir) {
  std::vector<ClassFolder> classes;
  for (const auto& name : list_directory(dir).directories) {
    const std::string class_dir = join_path(dir, name);
    auto files = files_under(class_dir);
    if (files.empty())
      throw DataError("[data] image_folder: class folder " + class_dir +
                      " holds no files; put its images there or remove it");
    classes.push_back({name, class_dir, std::move(files)});
  }
  if (classes.size() < 2)
    throw DataError("[data] image_folder: " + dir + " holds " + (classes.empty() ? "no class folders" : "one class folder") +
                    "; it needs a sub-folder per class (at least two), each holding that class's images");
  return classes;
}

}  // namespace orchestrate::image_folder
