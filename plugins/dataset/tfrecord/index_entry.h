// The bytes of one cached record index, written and read back. A cache
// entry is a file orchestrate wrote, but it is still not trusted when read:
// a disk error, a crash mid-copy or a hand edit may have changed it, and a
// damaged count must not become a huge allocation, nor a damaged offset a
// read outside the data file. Decoding checks everything against the entry's
// own size and the data file's before anything is allocated or used. In
// memory only, so a fuzz target can call it on arbitrary bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "record_index.h"

namespace orchestrate::tfrecord {

// What says a data file is unchanged since it was indexed.
struct FileStamp {
  std::uint64_t size = 0;
  std::int64_t modified_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

// Which file and rules an entry is for.
struct IndexEntryKey {
  std::string path;   // absolute
  std::string rules;  // RecordRules::fingerprint()
  FileStamp stamp;
};

// Bump when the layout changes; entries of other versions are not read
// (their names differ too: see IndexCache).
inline constexpr std::uint64_t kIndexEntryVersion = 2;

std::string encode_index_entry(const IndexEntryKey& key, const FileIndex& index);

// The index `bytes` hold for `key`. nullopt when they are an intact entry
// for another file, other rules or the file as it was before it changed (a
// stale entry, replaced quietly); anything damaged throws DataError whose
// what() is the cause alone ("12 records need 384 bytes, 20 remain").
std::optional<FileIndex> decode_index_entry(std::string_view bytes, const IndexEntryKey& key);

}  // namespace orchestrate::tfrecord
