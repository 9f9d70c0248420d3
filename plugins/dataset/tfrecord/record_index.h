// Where a TFRecord file's usable records are, found by one scan, so that
// later reads go straight to a record (random access, which the format
// itself does not offer). Bad records are kept apart with their cause.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace orchestrate::tfrecord {

struct IndexedRecord {
  std::uint64_t index = 0;       // in file order, counting bad records too
  std::uint64_t offset = 0;      // of its length field
  std::uint64_t data_bytes = 0;
  std::int64_t label = 0;
};

struct BadRecord {
  std::uint64_t index = 0;
  std::uint64_t offset = 0;
  std::string cause;
};

struct FileIndex {
  std::vector<IndexedRecord> records;
  std::vector<BadRecord> bad;
};

// A record's label, or an exception whose what() is why the record is bad.
using RecordCheck = std::function<std::int64_t(std::string_view data)>;

// Scans `path` once, checking both CRCs of every record and then `check`.
// A bad length CRC or a truncation ends the scan: the records before it stay
// usable, and the damage is one bad record. A file that cannot be read
// throws DataError.
FileIndex index_file(const std::string& path, const RecordCheck& check);

}  // namespace orchestrate::tfrecord
