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

// The format is little-endian whatever the host is; these say so explicitly.
void put_u32(unsigned char* out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<unsigned char>(value >> (8 * i));
}
void put_u64(unsigned char* out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(value >> (8 * i));
}
std::uint32_t get_u32(const unsigned char* in) {
  std::uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | in[i];
  return value;
}
std::uint64_t get_u64(const unsigned char* in) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | in[i];
  return value;
}

std::string hex(std::uint32_t value) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

std::string system_error(const std::string& path, const std::string& what) {
  return "[data] tfrecord: " + path + ": " + what + ": " + std::strerror(errno);
}

// The cause when the 12 header bytes are damaged, or "".
std::string header_damage(const unsigned char* header) {
  const std::uint32_t stored = get_u32(header + 8);
  const std::uint32_t computed = mask_crc(crc32c(std::string_view(reinterpret_cast<const char*>(header), 8)));
  if (stored == computed) return "";
  return "bad length CRC (stored " + hex(stored) + ", computed " + hex(computed) + ")";
}

std::string data_damage(std::string_view data, const unsigned char* footer) {
  const std::uint32_t stored = get_u32(footer);
  const std::uint32_t computed = masked_crc32c(data);
  if (stored == computed) return "";
  return "bad data CRC (stored " + hex(stored) + ", computed " + hex(computed) + ")";
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
  std::array<unsigned char, kRecordHeaderBytes> header{};
  put_u64(header.data(), data.size());
  put_u32(header.data() + 8, mask_crc(crc32c(std::string_view(reinterpret_cast<const char*>(header.data()), 8))));
  std::array<unsigned char, kRecordFooterBytes> footer{};
  put_u32(footer.data(), masked_crc32c(data));
  if (std::fwrite(header.data(), 1, header.size(), file_) != header.size() ||
      std::fwrite(data.data(), 1, data.size(), file_) != data.size() ||
      std::fwrite(footer.data(), 1, footer.size(), file_) != footer.size())
    throw DataError(system_error(path_, "write failed"));
  const std::uint64_t start = offset_;
  offset_ += framed_size(data.size());
  return start;
}

void TfRecordWriter::close() {
  if (!file_) return;
  const bool failed = std::ferror(file_) != 0;
  const bool close_failed = std::fclose(file_) != 0;
  file_ = nullptr;
  if (failed || close_failed) throw DataError(system_error(path_, "write failed"));
}

// --- TfRecordScanner -------------------------------------------------------------

TfRecordScanner::TfRecordScanner(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "rb");
  if (!file_) throw DataError(system_error(path_, "cannot be opened"));
  struct stat status {};
  if (fstat(fileno(file_), &status) != 0) throw DataError(system_error(path_, "cannot be read"));
  size_ = static_cast<std::uint64_t>(status.st_size);
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
}

TfRecordScanner::~TfRecordScanner() {
  if (file_) std::fclose(file_);
}

std::size_t TfRecordScanner::read_up_to(void* destination, std::size_t bytes) {
  const std::size_t got = std::fread(destination, 1, bytes, file_);
  if (got < bytes && std::ferror(file_)) throw DataError(system_error(path_, "read failed"));
  offset_ += got;
  return got;
}

bool TfRecordScanner::next(ScannedRecord& record) {
  if (ended_ || offset_ == size_) return false;
  record.place = {path_, index_++, offset_};
  record.data.clear();
  record.damage.clear();
  record.ends_scan = false;
  const auto end_with = [&](std::string cause) {
    record.damage = std::move(cause);
    record.ends_scan = ended_ = true;
    return true;
  };

  std::array<unsigned char, kRecordHeaderBytes> header{};
  const std::size_t header_got = read_up_to(header.data(), header.size());
  if (header_got < header.size()) return end_with(truncated(header_got, kRecordHeaderBytes, "header"));
  if (auto damage = header_damage(header.data()); !damage.empty()) return end_with(std::move(damage));

  // The length is now trusted, but the file may still end before the data does.
  const std::uint64_t length = get_u64(header.data());
  const std::uint64_t left = size_ - offset_;
  if (length > left || left - length < kRecordFooterBytes) {  // (length + 4 could overflow)
    record.data.resize(static_cast<std::size_t>(std::min(length, left)));
    read_up_to(record.data.data(), record.data.size());
    return end_with(length > left ? truncated(left, length, "data")
                                  : truncated(left - length, kRecordFooterBytes, "data CRC"));
  }
  record.data.resize(static_cast<std::size_t>(length));
  std::array<unsigned char, kRecordFooterBytes> footer{};
  if (read_up_to(record.data.data(), record.data.size()) < record.data.size() ||
      read_up_to(footer.data(), footer.size()) < footer.size())
    return end_with("truncated: the file shrank while it was read");
  record.damage = data_damage(record.data, footer.data());
  return true;
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
  const auto* bytes = reinterpret_cast<const unsigned char*>(frame.data());
  if (got < kRecordHeaderBytes) throw RecordError(place, truncated(got, kRecordHeaderBytes, "header"));
  if (auto damage = header_damage(bytes); !damage.empty()) throw RecordError(place, damage);
  if (const std::uint64_t length = get_u64(bytes); length != data_bytes)
    throw RecordError(place, "holds " + std::to_string(length) + " data bytes where the index says " +
                                 std::to_string(data_bytes) + "; the file changed after it was indexed");
  if (got < frame.size())
    throw RecordError(place, truncated(got - kRecordHeaderBytes, data_bytes + kRecordFooterBytes, "data and CRC"));
  std::string data = frame.substr(kRecordHeaderBytes, static_cast<std::size_t>(data_bytes));
  if (auto damage = data_damage(data, bytes + kRecordHeaderBytes + data_bytes); !damage.empty())
    throw RecordError(place, damage);
  return data;
}

}  // namespace orchestrate::tfrecord
