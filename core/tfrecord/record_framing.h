// TensorFlow's TFRecord framing, read and written. Each record is
//   uint64 length                     little-endian
//   uint32 masked CRC-32C of those 8 length bytes
//   byte   data[length]
//   uint32 masked CRC-32C of the data
// with no file header, padding or index: record N is found by reading the N
// records before it (TfRecordScanner), or directly at an offset an earlier
// scan recorded (RecordFile::read_at). Both CRCs are checked on every read.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "record_error.h"

namespace orchestrate::tfrecord {

inline constexpr std::uint64_t kRecordHeaderBytes = 12;  // length and its CRC
inline constexpr std::uint64_t kRecordFooterBytes = 4;   // the data's CRC
inline constexpr std::uint64_t framed_size(std::uint64_t data_bytes) {
  return kRecordHeaderBytes + data_bytes + kRecordFooterBytes;
}

// Writes a new file record by record (truncating an existing one).
class TfRecordWriter {
 public:
  explicit TfRecordWriter(std::string path);
  ~TfRecordWriter();  // closes; use close() to see errors
  TfRecordWriter(const TfRecordWriter&) = delete;
  TfRecordWriter& operator=(const TfRecordWriter&) = delete;

  // Appends one record; returns the byte offset it starts at.
  std::uint64_t write(std::string_view data);
  // Flushes and closes; throws DataError if any write failed.
  void close();

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::uint64_t offset_ = 0;
};

struct ScannedRecord {
  RecordPlace place;
  std::string data;    // as stored, even when damaged
  std::string damage;  // "" when both CRCs match; otherwise why not
  // A bad data CRC leaves the next record findable; a bad length CRC or a
  // truncated record does not (the length is not to be trusted), so the scan
  // ends with such a record.
  bool ends_scan = false;
};

// Reads a file's records front to back.
class TfRecordScanner {
 public:
  explicit TfRecordScanner(std::string path);  // a file that cannot be opened: DataError
  ~TfRecordScanner();
  TfRecordScanner(const TfRecordScanner&) = delete;
  TfRecordScanner& operator=(const TfRecordScanner&) = delete;

  // Fills `record` with the next record; false at the end of the file or
  // after a record that ends the scan. A read error throws DataError.
  bool next(ScannedRecord& record);

 private:
  std::size_t read_up_to(void* destination, std::size_t bytes);

  std::string path_;
  std::FILE* file_ = nullptr;
  std::uint64_t size_ = 0;
  std::uint64_t offset_ = 0;
  std::uint64_t index_ = 0;
  bool ended_ = false;
};

// A file open for reads at known offsets. read_at is const and uses pread,
// so any number of threads may read one RecordFile at once.
class RecordFile {
 public:
  explicit RecordFile(std::string path);  // a file that cannot be opened: DataError
  ~RecordFile();
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;

  // The data of the record at `place`, which a scan found holding
  // `data_bytes`; damage (a CRC, truncation, a length that differs because
  // the file changed since) throws RecordError.
  std::string read_at(const RecordPlace& place, std::uint64_t data_bytes) const;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace orchestrate::tfrecord
