// Record indexes kept between runs, so only the first run over a file pays
// for its scan (for ImageNet's 140 GB, minutes). An index is reused only for
// the same file (path, size and modification time) under the same rules.
//
// The cache lives in a directory of its own rather than beside the data:
// data directories are often read-only (/usr/share/datasets, shared
// storage), and an index file beside train-00000-of-01024 would match the
// train-* pattern that finds the data.
//
// An entry read back is checked (index_entry.h); a damaged one is indexed
// again, and load() says why, for one warning line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "index_entry.h"
#include "record_index.h"

namespace orchestrate::tfrecord {

// The file's size and modification time; a file that cannot be stat'ed throws DataError.
FileStamp stamp_of(const std::string& path);

// $ORCHESTRATE_CACHE/tfrecord-index, else under $XDG_CACHE_HOME or ~/.cache
// (the cache scripts/setup also uses).
std::string default_index_cache_dir();

class IndexCache {
 public:
  explicit IndexCache(std::string dir);  // "": nothing is cached

  const std::string& dir() const { return dir_; }
  // The index cached for this file and rules, if it is still valid. An
  // entry that exists but is damaged sets `damage` to "ENTRY: CAUSE".
  std::optional<FileIndex> load(const std::string& path, const FileStamp& stamp, const std::string& rules,
                                std::string& damage) const;
  // Stores it atomically (concurrent runs may index the same file); returns
  // why it could not, or "" (a cache that cannot be written only costs time).
  std::string save(const std::string& path, const FileStamp& stamp, const std::string& rules,
                   const FileIndex& index) const;

 private:
  std::string entry_path(const std::string& path, const std::string& rules) const;
  std::string dir_;
};

}  // namespace orchestrate::tfrecord
