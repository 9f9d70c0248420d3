#include "idx_file.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "orchestrate/error.h"

namespace orchestrate {

// A gzip file read front to back; gzread also reads uncompressed files as is.
class GzipInput {
 public:
  using Fail = std::function<void(const std::string&)>;  // never returns

  GzipInput(const std::string& path, const std::string& missing_hint, Fail fail) : fail_(std::move(fail)) {
    errno = 0;
    file_ = gzopen(path.c_str(), "rb");
    if (!file_ && errno == ENOENT) fail_("file not found; " + missing_hint);
    if (!file_) fail_(std::string("cannot be opened: ") + std::strerror(errno));
    gzbuffer(file_, buffer_bytes(path));
  }
  ~GzipInput() { gzclose(file_); }

  // 1 MiB reads for data sets; no more than the file for a small one.
  static unsigned buffer_bytes(const std::string& path) {
    struct stat status {};
    const std::uint64_t size = ::stat(path.c_str(), &status) == 0 ? static_cast<std::uint64_t>(status.st_size) : 0;
    return static_cast<unsigned>(std::clamp<std::uint64_t>(size, 8 << 10, 1 << 20));
  }
  GzipInput(const GzipInput&) = delete;
  GzipInput& operator=(const GzipInput&) = delete;

  // Fills `destination` with up to `bytes`; fewer only at the end of the data.
  std::size_t read_up_to(void* destination, std::size_t bytes) {
    auto* out = static_cast<unsigned char*>(destination);
    std::size_t done = 0;
    while (done < bytes) {
      const auto chunk = static_cast<unsigned>(std::min<std::size_t>(bytes - done, 1u << 30));
      const int got = gzread(file_, out + done, chunk);
      if (got < 0) fail_corrupt();
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    if (done < bytes) {
      int code = Z_OK;
      gzerror(file_, &code);
      if (code != Z_OK && code != Z_BUF_ERROR) fail_corrupt();
    }
    return done;
  }

  // Fills `destination` completely or fails, naming `what` was being read.
  void read_exactly(void* destination, std::size_t bytes, const std::string& what) {
    const std::size_t done = read_up_to(destination, bytes);
    if (done < bytes) fail_truncated(bytes, done, what);
  }

  [[noreturn]] void fail_truncated(std::uint64_t expected, std::uint64_t found, const std::string& what) {
    fail_("truncated: expected " + std::to_string(expected) + " bytes of " + what + ", found " + std::to_string(found) +
          "; the download was cut short, reinstall or download it again");
    std::abort();  // fail_ never returns
  }

  std::uint32_t read_big_endian_u32(const std::string& what) {
    std::array<unsigned char, 4> bytes{};
    read_exactly(bytes.data(), bytes.size(), what);
    return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) | (std::uint32_t{bytes[2]} << 8) |
           std::uint32_t{bytes[3]};
  }

  bool at_end() {
    unsigned char extra = 0;
    const int got = gzread(file_, &extra, 1);
    if (got < 0) fail_corrupt();
    return got == 0;
  }

 private:
  void fail_corrupt() {
    int code = Z_OK;
    const char* message = gzerror(file_, &code);
    fail_(std::string("corrupt gzip data (") + (message ? message : "unknown zlib error") +
          "); reinstall or download it again");
  }

  Fail fail_;
  gzFile file_ = nullptr;
};

namespace {

// IDX magic: two zero bytes, the element type (0x08: unsigned byte), the number of dimensions.
constexpr std::uint32_t kUnsignedBytes = 0x0800;

// Memory for the items is allocated in steps that at most double what was
// read so far, starting here, so it follows the data, not the header.
constexpr std::size_t kFirstReadBytes = std::size_t{1} << 20;

}  // namespace

IdxFile::IdxFile(IdxSource source, std::uint32_t dimensions, const std::string& kind) : source_(std::move(source)) {
  input_ = std::make_unique<GzipInput>(source_.path, source_.missing_hint, [this](const std::string& p) { fail(p); });
  const std::uint32_t magic = input_->read_big_endian_u32("header");
  const std::uint32_t expected = kUnsignedBytes + dimensions;
  if (magic != expected)
    fail("magic number is " + std::to_string(magic) + ", expected " + std::to_string(expected) + " for an IDX " + kind +
         " file; the file is not what its name says, or is corrupt");
  for (std::uint32_t d = 0; d < dimensions; ++d) shape_.push_back(input_->read_big_endian_u32("header"));
  for (const auto side : item_shape())
    if (side == 0) fail("its header declares " + kind + "s with a side of 0; the file is corrupt, reinstall or download it again");
}

IdxFile::~IdxFile() = default;

std::int64_t IdxFile::kept(std::int64_t limit) const {
  return limit > 0 ? std::min<std::int64_t>(limit, count()) : std::int64_t{count()};
}

std::vector<std::uint8_t> IdxFile::read_bytes(std::int64_t limit, const std::string& what) {
  // Up to three 32-bit sides and a 32-bit count: the product can overflow 64 bits.
  std::uint64_t total = static_cast<std::uint64_t>(kept(limit));
  for (const auto side : item_shape())
    if (__builtin_mul_overflow(total, std::uint64_t{side}, &total) || total > PTRDIFF_MAX)
      fail("its header declares more bytes of " + what + " than any file holds; the file is corrupt, reinstall or "
           "download it again");
  std::vector<std::uint8_t> data;
  while (data.size() < total) {
    const std::size_t at = data.size();
    const std::size_t step = std::min<std::uint64_t>(total - at, std::max(at, kFirstReadBytes));
    data.resize(at + step);
    const std::size_t got = input_->read_up_to(data.data() + at, step);
    if (got < step) input_->fail_truncated(total, at + got, what);
  }
  if (kept(limit) == std::int64_t{count()} && !input_->at_end())
    fail("has data after the " + std::to_string(count()) +
         " records its header declares; the file is corrupt, reinstall or download it again");
  return data;
}

void IdxFile::fail(const std::string& problem) const {
  throw DataError("[data] " + source_.dataset + ": " + source_.path + ": " + problem);
}

}  // namespace orchestrate
