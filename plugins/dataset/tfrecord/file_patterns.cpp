#include "file_patterns.h"

#include <glob.h>

#include <algorithm>
#include <memory>
#include <set>

#include "orchestrate/error.h"

namespace orchestrate::tfrecord {

namespace {

std::string under(const std::string& dir, const std::string& pattern) {
  if (dir.empty() || pattern.starts_with("/")) return pattern;
  return dir.back() == '/' ? dir + pattern : dir + "/" + pattern;
}

std::vector<std::string> matches(const std::string& pattern) {
  glob_t found{};
  const std::unique_ptr<glob_t, void (*)(glob_t*)> release(&found, globfree);
  const int status = ::glob(pattern.c_str(), GLOB_MARK, nullptr, &found);  // sorted; directories end in '/'
  if (status == GLOB_NOSPACE || status == GLOB_ABORTED)
    throw DataError("[data] tfrecord: " + pattern + ": cannot be listed");
  std::vector<std::string> files;
  for (std::size_t i = 0; status == 0 && i < found.gl_pathc; ++i) {
    const std::string path = found.gl_pathv[i];
    if (!path.ends_with("/")) files.push_back(path);
  }
  return files;
}

}  // namespace

std::vector<std::string> expand_file_patterns(const std::vector<std::string>& patterns, const std::string& dir) {
  std::vector<std::string> files;
  std::set<std::string> listed;
  for (const auto& pattern : patterns) {
    const std::string full = under(dir, pattern);
    const auto found = matches(full);
    if (found.empty()) throw DataError("[data] tfrecord: no file matches " + full);
    for (const auto& file : found)
      if (listed.insert(file).second) files.push_back(file);
  }
  return files;
}

}  // namespace orchestrate::tfrecord
