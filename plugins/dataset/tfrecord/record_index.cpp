#include "record_index.h"

#include <exception>

namespace orchestrate::tfrecord {

FileIndex index_records(TfRecordScanner& scanner, const RecordCheck& check) {
  FileIndex index;
  index.file_bytes = scanner.size();
  ScannedRecord record;
  while (scanner.next(record)) {
    const auto& place = record.place;
    if (!record.damage.empty()) {
      index.bad.push_back({place.index, place.offset, record.region_bytes, record.damage});
      continue;
    }
    try {
      const std::int64_t label = check(record.data);
      index.records.push_back({place.index, place.offset, record.data.size(), label});
    } catch (const std::exception& bad) {
      index.bad.push_back({place.index, place.offset, 0, bad.what()});
    }
  }
  return index;
}

FileIndex index_file(const std::string& path, const RecordCheck& check) {
  TfRecordScanner scanner(path);
  return index_records(scanner, check);
}

}  // namespace orchestrate::tfrecord
