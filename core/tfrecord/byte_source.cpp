#include "byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "orchestrate/error.h"

namespace orchestrate::tfrecord {

namespace {

// Large enough that a scan costs few system calls, small enough that a scan
// per core stays cheap in memory.
constexpr std::uint64_t kReadAheadBytes = 1 << 20;

std::string system_error(const std::string& path, const std::string& what) {
  return "[data] tfrecord: " + path + ": " + what + ": " + std::strerror(errno);
}

class FileBytes final : public ByteSource {
 public:
  explicit FileBytes(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw DataError(system_error(path_, "cannot be opened"));
    struct stat status {};
    if (::fstat(fd_, &status) != 0) {
      const std::string message = system_error(path_, "cannot be read");
      ::close(fd_);
      throw DataError(message);
    }
    size_ = static_cast<std::uint64_t>(status.st_size);
  }
  ~FileBytes() override { ::close(fd_); }

  std::uint64_t size() const override { return size_; }

  std::string_view bytes_at(std::uint64_t offset, std::uint64_t count) override {
    if (offset >= size_) return {};
    count = std::min(count, size_ - offset);
    const bool buffered = offset >= buffer_start_ && offset - buffer_start_ + count <= buffer_.size();
    if (!buffered) fill(offset, std::max(count, std::min(kReadAheadBytes, size_ - offset)));
    const std::uint64_t skip = offset - buffer_start_;
    return std::string_view(buffer_).substr(skip, std::min<std::uint64_t>(count, buffer_.size() - skip));
  }

 private:
  // Reads up to `count` bytes at `offset` into the buffer; fewer when the
  // file shrank since it was opened.
  void fill(std::uint64_t offset, std::uint64_t count) {
    buffer_.resize(count);
    std::uint64_t got = 0;
    while (got < count) {
      const ssize_t n = ::pread(fd_, buffer_.data() + got, count - got, static_cast<off_t>(offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw DataError(system_error(path_, "read failed"));
      if (n == 0) break;
      got += static_cast<std::uint64_t>(n);
    }
    buffer_.resize(got);
    buffer_start_ = offset;
  }

  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::string buffer_;
  std::uint64_t buffer_start_ = 0;
};

class MemoryBytes final : public ByteSource {
 public:
  explicit MemoryBytes(std::string_view bytes) : bytes_(bytes) {}
  std::uint64_t size() const override { return bytes_.size(); }
  std::string_view bytes_at(std::uint64_t offset, std::uint64_t count) override {
    if (offset >= bytes_.size()) return {};
    return bytes_.substr(offset, std::min<std::uint64_t>(count, bytes_.size() - offset));
  }

 private:
  std::string_view bytes_;
};

}  // namespace

ByteSource::~ByteSource() = default;

std::unique_ptr<ByteSource> file_bytes(const std::string& path) { return std::make_unique<FileBytes>(path); }

std::unique_ptr<ByteSource> memory_bytes(std::string_view bytes) { return std::make_unique<MemoryBytes>(bytes); }

}  // namespace orchestrate::tfrecord
