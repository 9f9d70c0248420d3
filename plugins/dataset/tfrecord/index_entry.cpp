#include "index_entry.h"

#include "orchestrate/error.h"
#include "orchestrate/tf_example/record_label.h"
#include "orchestrate/tfrecord/frame_checks.h"

namespace orchestrate::tfrecord {

namespace {

constexpr std::string_view kMagic = "orchestrate-tfrecord-index\n";
// Fixed bytes per entry before its text: a record is 4 u64 fields, a bad record 3 and its cause's length.
constexpr std::uint64_t kRecordBytes = 32;
constexpr std::uint64_t kBadRecordBytes = 32;
// Causes are one line each that orchestrate wrote; a longer one, or one
// with a line break, was not (and would flood the one-line bad_data events).
constexpr std::uint64_t kMaxCauseBytes = 4096;

// Fixed-width little-endian fields and length-prefixed text.
void put_u64(std::string& out, std::uint64_t value) {
  char bytes[8];
  put_little_endian_u64(bytes, value);
  out.append(bytes, 8);
}

void put_text(std::string& out, std::string_view text) {
  put_u64(out, text.size());
  out.append(text);
}

std::string n(std::uint64_t value) { return std::to_string(value); }

class EntryReader {
 public:
  // Reads `bytes` from `at` on.
  EntryReader(std::string_view bytes, std::uint64_t at) : bytes_(bytes), at_(at) {}

  std::uint64_t u64(const char* what) {
    need(8, what);
    const std::uint64_t value = little_endian_u64(bytes_.data() + at_);
    at_ += 8;
    return value;
  }
  std::string_view text(const char* what) {
    const std::uint64_t size = u64(what);
    need(size, what);
    const std::string_view value = bytes_.substr(at_, size);
    at_ += size;
    return value;
  }
  // Checks that `count` items of `bytes_each` fixed bytes fit in what is left,
  // before a vector of `count` is allocated.
  void room_for(std::uint64_t count, std::uint64_t bytes_each, const char* items) const {
    if (count > left() / bytes_each)
      throw DataError(n(count) + " " + items + " need at least " + n(bytes_each) + " bytes each, " + n(left()) +
                      " bytes remain");
  }
  std::uint64_t left() const { return bytes_.size() - at_; }
  std::uint64_t at() const { return at_; }

 private:
  void need(std::uint64_t size, const char* what) const {
    if (size > left())
      throw DataError("the entry ends at byte " + n(bytes_.size()) + " inside its " + what + " (" + n(size) +
                      " bytes at byte " + n(at_) + ")");
  }

  std::string_view bytes_;
  std::uint64_t at_;
};

// The records in file order, each inside the file and after the one before.
void read_records(EntryReader& in, std::uint64_t file_bytes, FileIndex& index) {
  const std::uint64_t count = in.u64("record count");
  in.room_for(count, kRecordBytes, "records");
  if (count > file_bytes / framed_size(0))
    throw DataError(n(count) + " records cannot fit in a data file of " + n(file_bytes) + " bytes");
  index.records.resize(count);
  std::uint64_t end_of_previous = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    auto& record = index.records[i];
    record.index = in.u64("record number");
    record.offset = in.u64("record offset");
    record.data_bytes = in.u64("record length");
    const std::uint64_t label = in.u64("record label");
    const std::string which = "record " + n(i) + " of the entry";
    if (i > 0 && record.index <= index.records[i - 1].index)
      throw DataError(which + " has number " + n(record.index) + ", not after " + n(index.records[i - 1].index));
    if (record.offset < end_of_previous || record.offset > file_bytes ||
        file_bytes - record.offset < kRecordHeaderBytes + kRecordFooterBytes ||
        record.data_bytes > file_bytes - record.offset - kRecordHeaderBytes - kRecordFooterBytes)
      throw DataError(which + " (" + n(record.data_bytes) + " bytes at byte " + n(record.offset) +
                      ") is not within the data file's " + n(file_bytes) + " bytes after the record before it");
    if (label >= static_cast<std::uint64_t>(kMaxClasses))
      throw DataError(which + " has label " + std::to_string(static_cast<std::int64_t>(label)) + ", outside [0, " +
                      n(kMaxClasses) + ")");
    record.label = static_cast<std::int64_t>(label);
    end_of_previous = record.offset + framed_size(record.data_bytes);
  }
}

void read_bad_records(EntryReader& in, std::uint64_t file_bytes, FileIndex& index) {
  const std::uint64_t count = in.u64("bad record count");
  in.room_for(count, kBadRecordBytes, "bad records");
  if (count > file_bytes)  // each holds at least a byte of the file
    throw DataError(n(count) + " bad records cannot fit in a data file of " + n(file_bytes) + " bytes");
  index.bad.resize(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    auto& record = index.bad[i];
    record.index = in.u64("bad record number");
    record.offset = in.u64("bad record offset");
    record.region_bytes = in.u64("bad record's region bytes");
    const std::string_view cause = in.text("bad record's cause");
    const std::string which = "bad record " + n(i) + " of the entry";
    if (i > 0 && (record.index <= index.bad[i - 1].index || record.offset <= index.bad[i - 1].offset))
      throw DataError(which + " (number " + n(record.index) + ", byte " + n(record.offset) +
                      ") is not after the one before it");
    if (record.offset >= file_bytes || record.region_bytes > file_bytes - record.offset)
      throw DataError(which + " (" + n(record.region_bytes) + " bytes at byte " + n(record.offset) +
                      ") is not within the data file's " + n(file_bytes) + " bytes");
    if (cause.size() > kMaxCauseBytes || cause.find_first_of("\n\r") != std::string_view::npos)
      throw DataError(which + " has a cause of " + n(cause.size()) + " bytes that is not one line of at most " +
                      n(kMaxCauseBytes));
    record.cause = cause;
  }
}

}  // namespace

std::string encode_index_entry(const IndexEntryKey& key, const FileIndex& index) {
  std::string out;
  put_text(out, kMagic);
  put_u64(out, kIndexEntryVersion);
  put_text(out, key.path);
  put_text(out, key.rules);
  put_u64(out, key.stamp.size);
  put_u64(out, static_cast<std::uint64_t>(key.stamp.modified_ns));
  put_u64(out, index.records.size());
  for (const auto& record : index.records) {
    put_u64(out, record.index);
    put_u64(out, record.offset);
    put_u64(out, record.data_bytes);
    put_u64(out, static_cast<std::uint64_t>(record.label));
  }
  put_u64(out, index.bad.size());
  for (const auto& record : index.bad) {
    put_u64(out, record.index);
    put_u64(out, record.offset);
    put_u64(out, record.region_bytes);
    put_text(out, record.cause);
  }
  return out;
}

std::optional<FileIndex> decode_index_entry(std::string_view bytes, const IndexEntryKey& key) {
  // The magic is compared before its length field is believed.
  if (bytes.size() < 8 + kMagic.size() || little_endian_u64(bytes.data()) != kMagic.size() ||
      bytes.substr(8, kMagic.size()) != kMagic)
    throw DataError("not an index cache entry (no \"orchestrate-tfrecord-index\" magic at its start)");
  EntryReader in(bytes, 8 + kMagic.size());
  if (const std::uint64_t version = in.u64("version"); version != kIndexEntryVersion)
    throw DataError("format version " + n(version) + ", where this orchestrate writes " + n(kIndexEntryVersion));
  const std::string_view path = in.text("data file path");
  const std::string_view rules = in.text("rules");
  FileStamp stamp;
  stamp.size = in.u64("data file size");
  stamp.modified_ns = static_cast<std::int64_t>(in.u64("data file time"));
  // Another file (a name collision) or the file before it changed: not damage.
  if (path != key.path || rules != key.rules || stamp != key.stamp) return std::nullopt;

  FileIndex index;
  index.file_bytes = stamp.size;
  read_records(in, stamp.size, index);
  read_bad_records(in, stamp.size, index);
  if (in.left() != 0) throw DataError(n(in.left()) + " bytes follow the last bad record, at byte " + n(in.at()));
  return index;
}

}  // namespace orchestrate::tfrecord
