#include "record_resync.h"

#include "frame_checks.h"

namespace orchestrate::tfrecord {

namespace {

// Candidates are tested in windows of this many bytes, each one view of the source.
constexpr std::uint64_t kWindowBytes = 1 << 16;

// Whether a whole record whose header CRC matched starts at `at`.
bool intact_at(ByteSource& source, std::uint64_t at, std::uint64_t length, ResyncBudget& budget) {
  const std::uint64_t room = source.size() - at - framed_size(0);  // the caller saw framed_size(0) bytes there
  if (length > room || !budget.spend(length)) return false;
  const std::string_view body = source.bytes_at(at + kRecordHeaderBytes, length + kRecordFooterBytes);
  if (body.size() < length + kRecordFooterBytes) return false;  // the file shrank
  return data_damage(body.substr(0, length), body.substr(length)).empty();
}

}  // namespace

bool ResyncBudget::spend(std::uint64_t bytes) {
  if (bytes > left_) return false;
  left_ -= bytes;
  return true;
}

std::optional<std::uint64_t> find_intact_record(ByteSource& source, std::uint64_t from, ResyncBudget& budget) {
  std::uint64_t at = from;
  // The smallest record (no data) still needs framed_size(0) bytes.
  while (at < source.size() && source.size() - at >= framed_size(0)) {
    const std::string_view window = source.bytes_at(at, kWindowBytes);
    if (window.size() < kRecordHeaderBytes) return std::nullopt;  // the file shrank
    const std::uint64_t candidates = window.size() - kRecordHeaderBytes + 1;
    std::uint64_t i = 0;
    std::optional<std::uint64_t> length;
    while (i < candidates && !(length = trusted_length(window.substr(i, kRecordHeaderBytes)))) ++i;
    if (!length) {
      at += candidates;
      continue;
    }
    // The window's view ends here: intact_at reads the source again.
    if (source.size() - (at + i) >= framed_size(0) && intact_at(source, at + i, *length, budget)) return at + i;
    at += i + 1;
  }
  return std::nullopt;
}

}  // namespace orchestrate::tfrecord
