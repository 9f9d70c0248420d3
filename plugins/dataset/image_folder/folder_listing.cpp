#include "folder_listing.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "orchestrate/error.h"

namespace orchestrate::image_folder {

DirectoryEntries list_directory(const std::string& dir) {
  const std::unique_ptr<DIR, int (*)(DIR*)> listing(opendir(dir.c_str()), closedir);
  if (!listing) throw DataError("[data] image_folder: " + dir + ": cannot be listed (" + std::strerror(errno) + ")");
  DirectoryEntries entries;
  while (const dirent* entry = readdir(listing.get())) {
    const std::string name = entry->d_name;
    if (name.empty() || name.front() == '.') continue;
    struct stat status {};
    if (stat(join_path(dir, name).c_str(), &status) != 0) continue;  // a dangling link holds no image
    if (S_ISDIR(status.st_mode)) entries.directories.push_back(name);
    else if (S_ISREG(status.st_mode)) entries.files.push_back(name);
  }
  std::sort(entries.directories.begin(), entries.directories.end());
  std::sort(entries.files.begin(), entries.files.end());
  return entries;
}

bool is_directory(const std::string& path) {
  struct stat status {};
  return stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode);
}

std::string join_path(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::vector<std::string> files_under(const std::string& dir) {
  std::vector<std::string> found;
  const auto entries = list_directory(dir);
  found = entries.files;
  for (const auto& sub : entries.directories)
    for (const auto& file : files_under(join_path(dir, sub))) found.push_back(sub + "/" + file);
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace orchestrate::image_folder
