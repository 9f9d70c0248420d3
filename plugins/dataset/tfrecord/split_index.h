// The usable records of all files of a split, in file order, each file's
// index loaded from the cache or built by a scan (files in parallel).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "image_record.h"
#include "index_cache.h"
#include "record_index.h"

namespace orchestrate::tfrecord {

struct SplitRecord {
  std::uint32_t file = 0;  // into SplitIndex::files
  IndexedRecord record;
};

struct SplitBadRecord {
  std::uint32_t file = 0;
  BadRecord record;
};

struct SplitIndex {
  std::vector<std::string> files;
  std::vector<SplitRecord> records;
  std::vector<SplitBadRecord> bad;
  std::uint64_t bytes = 0;        // of every file, as indexed
  std::size_t files_scanned = 0;  // not found in the cache
  std::string cache_problem;      // why an index could not be cached, or ""
  std::size_t damaged_cache_entries = 0;  // found damaged, so scanned again
  std::string first_cache_damage;         // "ENTRY: CAUSE" of the first, or ""
};

SplitIndex index_split(std::vector<std::string> files, const RecordRules& rules, const IndexCache& cache);

}  // namespace orchestrate::tfrecord
