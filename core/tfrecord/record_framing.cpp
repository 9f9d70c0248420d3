#include "record_framing.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include "crc32c.h"

namespace orchestrate::tfrecord {

namespace {

std::string system_error(const std::string& path, const std::string& what) {
  return "[data] tfrecord: " + path + ": " + what + ": " + std::strerror(errno);
}

std::string truncated(std::uint64_t have, std::uint64_t need, const std::string& part) {
  return "truncated: the file ends " + std::to_string(have) + " bytes into the record's " + std::to_string(need) +
         "-byte " + part;
}

}  // namespace

// --- TfRecordWriter ------------------------------------------------------------

TfRecordWriter::TfRecordWriter(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (!file_) throw DataError(system_error(path_, "cannot be created"));
}

TfRecordWriter::~TfRecordWriter() {
  if (file_) std::fclose(file_);
}

std::uint64_t TfRecordWriter::write(std::string_view data) {
  if (!file_) throw DataError("[data] tfrecord: " + path_ + ": written after close()");
  std::array<char, kRecordHeaderBytes> header{};
  put_little_endian_u64(header.data(), data.size());
  put_little_endian_u32(header.data() + 8, masked_crc32c(std::string_view(header.data(), 8)));
  std::array<char, kRecordFooterBytes> footer{};
  put_little_endian_u32(footer.data(), masked_crc32c(data));
  if (std::fwrite(header.data(), 1, header.size(), file_) != header.size() ||
      std::fwrite(data.data(), 1, data.size(), file_) != data.size() ||
      std::fwrite(footer.data(), 1, footer.size(), file_) != footer.size())
    throw DataError(system_error(path_, "write failed"));
  const std::uint64_t start = offset_;
  offset_ += framed_size(data.size());
  return start;
}

void TfRecordWriter::flush() {
  if (file_ && (std::fflush(file_) != 0 || std::ferror(file_) != 0))
    throw DataError(system_error(path_, "write failed"));
}

void TfRecordWriter::close() {
  if (!file_) return;
  const bool failed = std::ferror(file_) != 0;
  const bool close_failed = std::fclose(file_) != 0;
  file_ = nullptr;
  if (failed || close_failed) throw DataError(system_error(path_, "write failed"));
}

// --- TfRecordScanner -------------------------------------------------------------

TfRecordScanner::TfRecordScanner(std::string path)
    : name_(path), source_(file_bytes(path)), budget_(source_->size()) {}

TfRecordScanner::TfRecordScanner(std::string name, std::string_view bytes)
    : name_(std::move(name)), source_(memory_bytes(bytes)), budget_(source_->size()) {}

bool TfRecordScanner::next(ScannedRecord& record) {
  const std::uint64_t size = source_->size();
  if (ended_ || offset_ >= size) return false;
  record.place = {name_, index_++, offset_};
  record.data.clear();
  record.damage.clear();
  record.region_bytes = 0;
  record.ends_scan = false;
  const auto end_with = [&](std::string cause) {
    record.damage = std::move(cause);
    record.ends_scan = ended_ = true;
    return true;
  };

  const std::string_view header = source_->bytes_at(offset_, kRecordHeaderBytes);
  if (header.size() < kRecordHeaderBytes) return end_with(truncated(header.size(), kRecordHeaderBytes, "header"));
  if (auto damage = header_damage(header); !damage.empty()) {
    skip_damaged_region(record, std::move(damage));
    return true;
  }

  // The length is now trusted, but the file may still end before the data does.
  const std::uint64_t length = little_endian_u64(header.data());
  const std::uint64_t left = size - offset_ - kRecordHeaderBytes;
  if (length > left || left - length < kRecordFooterBytes) {  // (length + 4 could overflow)
    record.data = source_->bytes_at(offset_ + kRecordHeaderBytes, std::min(length, left));
    return end_with(length > left ? truncated(left, length, "data")
                                  : truncated(left - length, kRecordFooterBytes, "data CRC"));
  }
  const std::string_view body = source_->bytes_at(offset_ + kRecordHeaderBytes, length + kRecordFooterBytes);
  if (body.size() < length + kRecordFooterBytes) return end_with("truncated: the file shrank while it was read");
  record.data = body.substr(0, length);
  record.damage = data_damage(record.data, body.substr(length));
  offset_ += framed_size(length);
  return true;
}

void TfRecordScanner::skip_damaged_region(ScannedRecord& record, std::string cause) {
  const std::uint64_t start = record.place.offset;
  // Where this record really ended went with its length, so the next one
  // may start at any byte after this header's first.
  const auto next = find_intact_record(*source_, start + 1, budget_);
  if (!next) {
    record.damage = cause + ": lost the remaining " + std::to_string(source_->size() - start) +
                    " bytes (at least 1 record): no intact record follows";
    record.region_bytes = source_->size() - start;
    record.ends_scan = ended_ = true;
    return;
  }
  record.region_bytes = *next - start;
  record.damage = cause + ": lost " + std::to_string(record.region_bytes) +
                  " bytes (at least 1 record) before the next intact record, at byte " + std::to_string(*next);
  offset_ = *next;
}

// --- RecordFile --------------------------------------------------------------------

RecordFile::RecordFile(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw DataError(system_error(path_, "cannot be opened"));
}

RecordFile::~RecordFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string RecordFile::read_at(const RecordPlace& place, std::uint64_t data_bytes) const {
  std::string frame(static_cast<std::size_t>(framed_size(data_bytes)), '\0');
  std::size_t got = 0;
  while (got < frame.size()) {
    const ssize_t n = ::pread(fd_, frame.data() + got, frame.size() - got, static_cast<off_t>(place.offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw DataError(system_error(path_, "read failed"));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  const std::string_view bytes(frame.data(), got);
  if (got < kRecordHeaderBytes) throw RecordError(place, truncated(got, kRecordHeaderBytes, "header"));
  if (auto damage = header_damage(bytes); !damage.empty()) throw RecordError(place, damage);
  if (const std::uint64_t length = little_endian_u64(bytes.data()); length != data_bytes)
    throw RecordError(place, "holds " + std::to_string(length) + " data bytes where the index says " +
                                 std::to_string(data_bytes) + "; the file changed after it was indexed");
  if (got < frame.size())
    throw RecordError(place, truncated(got - kRecordHeaderBytes, data_bytes + kRecordFooterBytes, "data and CRC"));
  std::string data = frame.substr(kRecordHeaderBytes, static_cast<std::size_t>(data_bytes));
  if (auto damage = data_damage(data, bytes.substr(kRecordHeaderBytes + data_bytes)); !damage.empty())
    throw RecordError(place, damage);
  return data;
}

}  // namespace orchestrate::tfrecord
