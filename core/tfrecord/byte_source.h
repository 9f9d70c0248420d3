// Where a record scan reads its bytes: a file, read ahead in large blocks
// with pread (so a scan that moves forward byte by byte while it
// resynchronises costs no system call per byte), or a buffer in memory
// (tests, and fuzz targets that hand the scanner arbitrary bytes).
//
// Not mmap: a file that shrinks under a mapping turns reads into SIGBUS,
// and a data set on shared storage may be rewritten while it is read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace orchestrate::tfrecord {

class ByteSource {
 public:
  virtual ~ByteSource();
  // Bytes there were when the source was opened.
  virtual std::uint64_t size() const = 0;
  // The `count` bytes at `offset`, or fewer where the source ends first
  // (none at or past its end). The view is valid until the next call. A
  // read error throws DataError.
  virtual std::string_view bytes_at(std::uint64_t offset, std::uint64_t count) = 0;
};

// A file that cannot be opened or stat'ed throws DataError naming it.
std::unique_ptr<ByteSource> file_bytes(const std::string& path);
// `bytes` must outlive the source.
std::unique_ptr<ByteSource> memory_bytes(std::string_view bytes);

}  // namespace orchestrate::tfrecord
