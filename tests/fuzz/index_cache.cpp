// The TFRecord index cache's entries read back (plugins/dataset/tfrecord/
// index_entry): orchestrate wrote them, but a disk error, a crash mid-copy or
// a hand edit may have changed them since. The first byte picks how the rest
// is used:
//   even: the rest is the entry itself;
//   odd:  a valid entry is encoded for a small index, then the rest is read
//         as (uint16 little-endian position, xor byte) edits to it; a
//         position past its end truncates it to position % size instead.
//         (Reaching the records through the checks before them by mutation
//         alone would take the fuzzer long.)
// Damage must surface as orchestrate::DataError, and an entry accepted must
// hold only records inside the data file, which the reader then trusts.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "index_entry.h"
#include "orchestrate/error.h"
#include "orchestrate/tf_example/record_label.h"
#include "orchestrate/tfrecord/frame_checks.h"

namespace tfrecord = orchestrate::tfrecord;

namespace {

const tfrecord::IndexEntryKey& key() {
  static const tfrecord::IndexEntryKey key{"/data/train-00000-of-00001", "image=image/encoded\n", {4096, 1700000000}};
  return key;
}

// Three records back to back and a bad one after them, as a scan finds them.
std::string valid_entry() {
  tfrecord::FileIndex index;
  index.file_bytes = key().stamp.size;
  std::uint64_t offset = 0;
  for (std::uint64_t i = 0; i < 3; ++i) {
    tfrecord::IndexedRecord record;
    record.index = i;
    record.offset = offset;
    record.data_bytes = 100 * (i + 1);
    record.label = static_cast<std::int64_t>(i);
    index.records.push_back(record);
    offset += tfrecord::framed_size(record.data_bytes);
  }
  tfrecord::BadRecord bad;
  bad.index = 3;
  bad.offset = offset;
  bad.region_bytes = 40;
  bad.cause = "bad data CRC";
  index.bad.push_back(bad);
  return tfrecord::encode_index_entry(key(), index);
}

std::string edited(std::string entry, const std::uint8_t* edits, std::size_t size) {
  for (std::size_t at = 0; at + 3 <= size && !entry.empty(); at += 3) {
    const std::size_t position = edits[at] | (std::size_t{edits[at + 1]} << 8);
    if (position < entry.size())
      entry[position] = static_cast<char>(entry[position] ^ edits[at + 2]);
    else
      entry.resize(position % entry.size());
  }
  return entry;
}

void check_accepted(const tfrecord::FileIndex& index) {
  const std::uint64_t file_bytes = key().stamp.size;
  for (const auto& record : index.records) {
    if (record.offset > file_bytes || tfrecord::framed_size(record.data_bytes) < record.data_bytes ||
        tfrecord::framed_size(record.data_bytes) > file_bytes - record.offset)
      __builtin_trap();  // a read the reader would make outside the file
    if (record.label < 0 || record.label >= tfrecord::kMaxClasses) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string entry = (data[0] & 1) ? edited(valid_entry(), data + 1, size - 1)
                                          : std::string(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if (const auto index = tfrecord::decode_index_entry(entry, key())) check_accepted(*index);
  } catch (const orchestrate::DataError&) {
  }
  return 0;
}
