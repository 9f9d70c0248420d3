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
#include <memory>
#include <string>
#include <string_view>

#include "byte_source.h"
#include "frame_checks.h"
#include "record_error.h"
#include "record_resync.h"

namespace orchestrate::tfrecord {

// Writes a new file record by record (truncating an existing one).
class TfRecordWriter {
 public:
  explicit TfRecordWriter(std::string path);
  ~TfRecordWriter();  // closes; use close() to see errors
  TfRecordWriter(const TfRecordWriter&) = delete;
  TfRecordWriter& operator=(const TfRecordWriter&) = delete;

  // Appends one record; returns the byte offset it starts at.
  std::uint64_t write(std::string_view data);
  // Hands what was written to the system (a reader sees it); throws
  // DataError if a write failed.
  void flush();
  // Flushes and closes; throws DataError if any write failed.
  void close();

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::uint64_t offset_ = 0;
};

struct ScannedRecord {
  RecordPlace place;
  std::string data;    // as stored, even when damaged ("" after a bad length)
  std::string damage;  // "" when both CRCs match; otherwise why not
  // After a bad length: the bytes skipped, up to the next intact record or
  // the end of the file (see record_resync.h). They count as one record,
  // though they may have held any number. 0 for every other record, damaged
  // or not: each is exactly one record.
  std::uint64_t region_bytes = 0;
  // A bad data CRC leaves the next record findable, and so does a bad
  // length CRC when an intact record follows somewhere; a truncated record,
  // or a bad length with no intact record after it, ends the scan.
  bool ends_scan = false;
};

// Reads a file's records front to back. After a bad length CRC it goes on
// at the next intact record (find_intact_record), counting what it skipped
// as one damaged record: record numbers after such a region count the
// region as one record, whatever it held; byte offsets stay exact.
class TfRecordScanner {
 public:
  explicit TfRecordScanner(std::string path);  // a file that cannot be opened: DataError
  // Scans `bytes` (which must outlive the scanner); `name` stands for the
  // file in places. For tests and fuzz targets.
  TfRecordScanner(std::string name, std::string_view bytes);
  TfRecordScanner(const TfRecordScanner&) = delete;
  TfRecordScanner& operator=(const TfRecordScanner&) = delete;

  // Fills `record` with the next record; false at the end of the file or
  // after a record that ends the scan. A read error throws DataError.
  bool next(ScannedRecord& record);
  // Bytes in the file (or buffer) when the scan began.
  std::uint64_t size() const { return source_->size(); }

 private:
  // Fills `record` for a header whose length CRC failed, and moves past the damage.
  void skip_damaged_region(ScannedRecord& record, std::string cause);

  std::string name_;
  std::unique_ptr<ByteSource> source_;
  std::uint64_t offset_ = 0;
  std::uint64_t index_ = 0;
  bool ended_ = false;
  ResyncBudget budget_;
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
