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

#include "orchestrate/error.h"

namespace orchestrate::tfrecord {

namespace {

// Bump when the layout below changes: older entries are then ignored.
constexpr const char* kMagic = "orchestrate-tfrecord-index 1\n";

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

// Fixed-width little-endian fields and length-prefixed strings.
class Writer {
 public:
  void u64(std::uint64_t value) {
    for (int i = 0; i < 8; ++i) out_.put(static_cast<char>(value >> (8 * i)));
  }
  void text(const std::string& value) {
    u64(value.size());
    out_.write(value.data(), static_cast<std::streamsize>(value.size()));
  }
  std::string bytes() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

class Reader {
 public:
  explicit Reader(std::string bytes) : bytes_(std::move(bytes)) {}
  bool u64(std::uint64_t& value) {
    if (bytes_.size() - at_ < 8) return false;
    value = 0;
    for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes_[at_ + i]);
    at_ += 8;
    return true;
  }
  bool text(std::string& value) {
    std::uint64_t size = 0;
    if (!u64(size) || bytes_.size() - at_ < size) return false;
    value = bytes_.substr(at_, size);
    at_ += size;
    return true;
  }
  bool at_end() const { return at_ == bytes_.size(); }
  // Whether `count` items of at least `bytes` each can still follow: a
  // damaged count must not become a huge allocation.
  bool room_for(std::uint64_t count, std::uint64_t bytes) const { return count <= (bytes_.size() - at_) / bytes; }

 private:
  std::string bytes_;
  std::size_t at_ = 0;
};

}  // namespace

FileStamp stamp_of(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0)
    throw DataError("[data] tfrecord: " + path + ": " + std::strerror(errno));
  return {static_cast<std::uint64_t>(status.st_size),
          static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1000000000 + status.st_mtim.tv_nsec};
}

std::string default_index_cache_dir() {
  std::string root;
  if (const char* cache = std::getenv("ORCHESTRATE_CACHE"); cache && *cache) {
    root = cache;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    root = std::string(xdg) + "/orchestrate";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    root = std::string(home) + "/.cache/orchestrate";
  } else {
    return "";
  }
  return root + "/tfrecord-index";
}

IndexCache::IndexCache(std::string dir) : dir_(std::move(dir)) {}

std::string IndexCache::entry_path(const std::string& path, const std::string& rules) const {
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(absolute(path) + '\0' + rules)));
  return dir_ + "/" + base_name(path) + "." + hash + ".index";
}

std::optional<FileIndex> IndexCache::load(const std::string& path, const FileStamp& stamp,
                                          const std::string& rules) const {
  if (dir_.empty()) return std::nullopt;
  std::ifstream in(entry_path(path, rules), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  Reader reader(content.str());
  std::string magic, stored_path, stored_rules;
  std::uint64_t size = 0, modified = 0, records = 0;
  if (!reader.text(magic) || magic != kMagic || !reader.text(stored_path) || stored_path != absolute(path) ||
      !reader.text(stored_rules) || stored_rules != rules || !reader.u64(size) || !reader.u64(modified) ||
      FileStamp{size, static_cast<std::int64_t>(modified)} != stamp || !reader.u64(records) ||
      !reader.room_for(records, 32))
    return std::nullopt;
  FileIndex index;
  index.records.resize(records);
  for (auto& record : index.records) {
    std::uint64_t label = 0;
    if (!reader.u64(record.index) || !reader.u64(record.offset) || !reader.u64(record.data_bytes) ||
        !reader.u64(label))
      return std::nullopt;
    record.label = static_cast<std::int64_t>(label);
  }
  std::uint64_t bad = 0;
  if (!reader.u64(bad) || !reader.room_for(bad, 24)) return std::nullopt;
  index.bad.resize(bad);
  for (auto& record : index.bad)
    if (!reader.u64(record.index) || !reader.u64(record.offset) || !reader.text(record.cause)) return std::nullopt;
  if (!reader.at_end()) return std::nullopt;
  return index;
}

std::string IndexCache::save(const std::string& path, const FileStamp& stamp, const std::string& rules,
                             const FileIndex& index) const {
  if (dir_.empty()) return "";
  if (!make_directories(dir_)) return dir_ + ": " + std::strerror(errno);
  Writer writer;
  writer.text(kMagic);
  writer.text(absolute(path));
  writer.text(rules);
  writer.u64(stamp.size);
  writer.u64(static_cast<std::uint64_t>(stamp.modified_ns));
  writer.u64(index.records.size());
  for (const auto& record : index.records) {
    writer.u64(record.index);
    writer.u64(record.offset);
    writer.u64(record.data_bytes);
    writer.u64(static_cast<std::uint64_t>(record.label));
  }
  writer.u64(index.bad.size());
  for (const auto& record : index.bad) {
    writer.u64(record.index);
    writer.u64(record.offset);
    writer.text(record.cause);
  }
  // Written under a name of its own, then renamed over the entry: a reader
  // sees the old entry or the new one, never half of one.
  const std::string entry = entry_path(path, rules);
  std::ostringstream temporary_name;
  temporary_name << entry << ".tmp-" << ::getpid() << "-" << std::this_thread::get_id();
  const std::string temporary = temporary_name.str();
  const std::string bytes = writer.bytes();
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
