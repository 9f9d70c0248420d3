#include "record_index.h"

#include <exception>

#include "record_framing.h"

namespace orchestrate::tfrecord {

FileIndex index_file(const std::string& path, const RecordCheck& check) {
  FileIndex index;
  TfRecordScanner scanner(path);
  ScannedRecord record;
  while (scanner.next(record)) {
    const auto& place = record.place;
    if (!record.damage.empty()) {
      index.bad.push_back({place.index, place.offset, record.damage});
      continue;
    }
    try {
      const std::int64_t label = check(record.data);
      index.records.push_back({place.index, place.offset, record.data.size(), label});
    } catch (const std::exception& bad) {
      index.bad.push_back({place.index, place.offset, bad.what()});
    }
  }
  return index;
}

}  // namespace orchestrate::tfrecord
