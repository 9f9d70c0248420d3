// IDX headers that lie: dimension products past 64 bits, sizes far beyond
// the file, sides of zero. Each is one error naming the file, found without
// allocating what the header claims. Free of LibTorch, so CI also runs it
// under ASan and UBSan (tests/fuzz), where an allocation of the claimed
// gigabytes would itself be reported.
#include "idx_file.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate {
namespace {

std::string idx_bytes(std::vector<std::uint32_t> sides, std::size_t data_bytes) {
  std::string bytes{0, 0, 8, static_cast<char>(sides.size())};
  for (const auto side : sides)
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(side >> shift));
  return bytes + std::string(data_bytes, '\x07');
}

std::string gzipped(const std::string& bytes) {
  std::string out(compressBound(bytes.size()) + 32, '\0');
  z_stream stream{};
  deflateInit2(&stream, 9, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY);  // 16: a gzip wrapper
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

class IdxHeaders : public ::testing::Test {
 protected:
  // What reading the file as images (3 dimensions) whole throws, or "".
  std::string refusal(const std::string& bytes, std::uint32_t dimensions = 3) {
    const std::string path = dir_.write("file.idx", bytes);
    try {
      IdxFile file({path, "idx", "give the right file"}, dimensions, dimensions == 3 ? "image" : "label");
      file.read_bytes(0, "pixels");
    } catch (const DataError& error) {
      return error.what();
    }
    return "";
  }
  std::string prefix() const { return "[data] idx: " + dir_.file("file.idx") + ": "; }

  testing::ScratchDir dir_;
};

TEST_F(IdxHeaders, AnHonestFileReads) {
  EXPECT_EQ(refusal(idx_bytes({2, 3, 4}, 24)), "");
  EXPECT_EQ(refusal(gzipped(idx_bytes({2, 3, 4}, 24))), "");
  EXPECT_EQ(refusal(idx_bytes({0, 28, 28}, 0)), "");  // no images at all is not damage
}

TEST_F(IdxHeaders, AProductPast64BitsIsRefused) {
  EXPECT_EQ(refusal(idx_bytes({0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, 16)),
            prefix() + "its header declares more bytes of pixels than any file holds; the file is corrupt, "
                       "reinstall or download it again");
}

TEST_F(IdxHeaders, SizesFarBeyondTheFileAreTruncationNotAnAllocation) {
  // 60000 images of 65535 x 65535: 257 TB declared, 100 bytes present.
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& bytes : {idx_bytes({60000, 65535, 65535}, 100), gzipped(idx_bytes({60000, 65535, 65535}, 100))})
    EXPECT_EQ(refusal(bytes), prefix() + "truncated: expected 257690173500000 bytes of pixels, found 100; the "
                                         "download was cut short, reinstall or download it again");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST_F(IdxHeaders, ASideOfZeroIsRefused) {
  EXPECT_EQ(refusal(idx_bytes({5, 0, 28}, 0)),
            prefix() + "its header declares images with a side of 0; the file is corrupt, reinstall or download it "
                       "again");
}

TEST_F(IdxHeaders, DataAfterTheDeclaredItemsIsRefused) {
  EXPECT_EQ(refusal(idx_bytes({3}, 4), 1),
            prefix() + "has data after the 3 records its header declares; the file is corrupt, reinstall or download "
                       "it again");
}

TEST_F(IdxHeaders, ALimitReadsOnlyThatMany) {
  const std::string path = dir_.write("file.idx", idx_bytes({4, 2, 2}, 16));
  IdxFile file({path, "idx", ""}, 3, "image");
  EXPECT_EQ(file.kept(3), 3);
  EXPECT_EQ(file.read_bytes(3, "pixels").size(), 12u);
}

}  // namespace
}  // namespace orchestrate
