#include "index_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "orchestrate/cache_dir.h"
#include "orchestrate/error.h"

namespace orchestrate::tfrecord {

namespace {

// FNV-1a: a stable name for an entry from the file's path and the rules
// (std::hash may differ between builds); collisions are caught by the path
// stored inside the entry.
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ULL;
  return hash;
}

std::string absolute(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// mkdir -p; false when the directory cannot be made.
bool make_directories(const std::string& dir) {
  for (std::size_t slash = dir.find('/', 1); ; slash = dir.find('/', slash + 1)) {
    const std::string prefix = dir.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return false;
    if (slash == std::string::npos) return true;
  }
}

}  // namespace

FileStamp stamp_of(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0)
    throw DataError("[data] tfrecord: " + path + ": " + std::strerror(errno));
  return {static_cast<std::uint64_t>(status.st_size),
          static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1000000000 + status.st_mtim.tv_nsec};
}

std::string default_index_cache_dir() {
  const std::string root = orchestrate::orchestrate_cache_dir();
  return root.empty() ? "" : root + "/tfrecord-index";
}

IndexCache::IndexCache(std::string dir) : dir_(std::move(dir)) {}

std::string IndexCache::entry_path(const std::string& path, const std::string& rules) const {
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(absolute(path) + '\0' + rules)));
  // The version in the name: entries an older orchestrate wrote are never
  // read (so never mistaken for damage), and a downgrade reads its own.
  return dir_ + "/" + base_name(path) + "." + hash + ".v" + std::to_string(kIndexEntryVersion) + ".index";
}

std::optional<FileIndex> IndexCache::load(const std::string& path, const FileStamp& stamp, const std::string& rules,
                                          std::string& damage) const {
  if (dir_.empty()) return std::nullopt;
  const std::string entry = entry_path(path, rules);
  std::ifstream in(entry, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  try {
    return decode_index_entry(content.str(), {absolute(path), rules, stamp});
  } catch (const DataError& error) {
    damage = entry + ": " + error.what();
    return std::nullopt;
  }
}

std::string IndexCache::save(const std::string& path, const FileStamp& stamp, const std::string& rules,
                             const FileIndex& index) const {
  if (dir_.empty()) return "";
  if (!make_directories(dir_)) return dir_ + ": " + std::strerror(errno);
  // Written under a name of its own, then renamed over the entry: a reader
  // sees the old entry or the new one, never half of one.
  const std::string entry = entry_path(path, rules);
  std::ostringstream temporary_name;
  temporary_name << entry << ".tmp-" << ::getpid() << "-" << std::this_thread::get_id();
  const std::string temporary = temporary_name.str();
  const std::string bytes = encode_index_entry({absolute(path), rules, stamp}, index);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) {
      std::remove(temporary.c_str());
      return temporary + ": cannot be written";
    }
  }
  if (std::rename(temporary.c_str(), entry.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temporary.c_str());
    return entry + ": " + why;
  }
  return "";
}

}  // namespace orchestrate::tfrecord
