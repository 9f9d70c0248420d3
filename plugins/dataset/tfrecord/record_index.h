// Where a TFRecord file's usable records are, found by one scan, so that
// later reads go straight to a record (random access, which the format
// itself does not offer). Bad records are kept apart with their cause.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrate/tfrecord/record_framing.h"

namespace orchestrate::tfrecord {

struct IndexedRecord {
  std::uint64_t index = 0;       // in file order, counting bad records too
  std::uint64_t offset = 0;      // of its length field
  std::uint64_t data_bytes = 0;
  std::int64_t label = 0;
};

// A bad record, or a damaged region that counts as one (see record_resync.h).
struct BadRecord {
  std::uint64_t index = 0;
  std::uint64_t offset = 0;
  std::uint64_t region_bytes = 0;  // a damaged region's (ScannedRecord::region_bytes); 0: one bad record
  std::string cause;
};

struct FileIndex {
  std::vector<IndexedRecord> records;
  std::vector<BadRecord> bad;
  std::uint64_t file_bytes = 0;  // the file's size when indexed
};

// A record's label, or an exception whose what() is why the record is bad.
using RecordCheck = std::function<std::int64_t(std::string_view data)>;

// Scans `path` once, checking both CRCs of every record and then `check`.
// After a bad length CRC the scan goes on at the next intact record; the
// region skipped is one bad record with its bytes. A truncation ends the
// scan: the records before it stay usable. A file that cannot be read
// throws DataError.
FileIndex index_file(const std::string& path, const RecordCheck& check);
// The same over any scanner (one reading memory, in tests and fuzz targets).
FileIndex index_records(TfRecordScanner& scanner, const RecordCheck& check);

}  // namespace orchestrate::tfrecord
