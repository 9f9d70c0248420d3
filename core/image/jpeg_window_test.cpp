// Decoding a window of a JPEG (jpeg_window.h): a whole image gives exactly
// TurboJPEG's bytes at every DCT scale; a window gives the same pixels as
// that region of the whole decode; what lies below the window is never read;
// a progressive file with too many scans is refused.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "image_bombs_testing.h"
#include "image_decode.h"
#include "image_transforms.h"
#include "jpeg_window.h"
#include "orchestrate/error.h"
#include "orchestrate/testing/python_reference.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate {
namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Photo-like JPEGs written by Pillow (Fashion-MNIST pictures enlarged, one
// per channel), in the layouts cameras and encoders produce.
class JpegWindow : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir;
    testing::run_python(R"(
import gzip, numpy as np
from PIL import Image
raw = gzip.open("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz").read()
photos = np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 28, 28)
d = ")" + dir_->path().string() + R"("
def photo(h, w, first):
    planes = [np.asarray(Image.fromarray(photos[first + k]).resize((w, h), Image.BICUBIC)) for k in range(3)]
    return Image.fromarray(np.stack(planes, axis=2))
photo(375, 500, 0).save(d + "/420.jpg", quality=90)
photo(231, 237, 3).save(d + "/444.jpg", quality=90, subsampling=0)
photo(333, 500, 6).save(d + "/progressive.jpg", quality=85, progressive=True)
photo(300, 211, 9).convert("L").save(d + "/grey.jpg", quality=90)
whole = open(d + "/420.jpg", "rb").read()
open(d + "/420_cut.jpg", "wb").write(whole[: len(whole) * 6 // 10])
)");
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string bytes(const std::string& name) { return read_bytes(dir_->file(name)); }
  static const std::vector<std::string>& names() {
    static const std::vector<std::string> all{"420.jpg", "444.jpg", "progressive.jpg", "grey.jpg"};
    return all;
  }
  static testing::ScratchDir* dir_;
};
testing::ScratchDir* JpegWindow::dir_ = nullptr;

// TurboJPEG's whole-image decode at eighths/8 of each side: what decode_image
// gave before windows existed.
at::Tensor turbojpeg_decode(const std::string& jpeg, int eighths) {
  const std::unique_ptr<void, int (*)(tjhandle)> handle(tjInitDecompress(), tjDestroy);
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  auto* data = reinterpret_cast<const unsigned char*>(jpeg.data());
  tjDecompressHeader3(handle.get(), data, jpeg.size(), &width, &height, &subsampling, &colorspace);
  const tjscalingfactor factor{eighths, 8};
  const int w = TJSCALED(width, factor), h = TJSCALED(height, factor);
  const bool grey = colorspace == TJCS_GRAY;
  auto out = at::empty({h, w, grey ? 1 : 3}, at::kByte);
  EXPECT_EQ(tjDecompress2(handle.get(), data, jpeg.size(), out.data_ptr<std::uint8_t>(), w, 0, h,
                          grey ? TJPF_GRAY : TJPF_RGB, TJFLAG_ACCURATEDCT),
            0);
  return out;
}

at::Tensor window_decode(const std::string& jpeg, const DecodeWindow& window) {
  at::Tensor out;
  decode_pixels(jpeg, "test.jpg", kDefaultMaxImagePixels, [&](std::int64_t, std::int64_t) { return window; },
                [&](const PixelLayout& layout) {
                  out = at::empty({layout.height, layout.width, layout.channels}, at::kByte);
                  return out.data_ptr<std::uint8_t>();
                });
  return out;
}

TEST_F(JpegWindow, AWholeImageDecodesToTurboJpegsBytesAtEveryScale) {
  for (const auto& name : names()) {
    const std::string jpeg = bytes(name);
    const auto full = turbojpeg_decode(jpeg, 8);
    for (const int eighths : {1, 2, 4, 8}) {  // the scales with SIMD inverse DCTs (jpeg_scale_eighths)
      SCOPED_TRACE(name + " at " + std::to_string(eighths) + "/8");
      const auto height = full.size(0), width = full.size(1);
      // The smallest min_side that still needs this scale.
      const std::int64_t min_side = (std::min(height, width) * eighths + 7) / 8;
      ASSERT_EQ(jpeg_scale_eighths(height, width, eighths == 8 ? 0 : min_side), eighths);
      const auto ours = window_decode(jpeg, whole_image(height, width, eighths == 8 ? 0 : min_side));
      EXPECT_TRUE(at::equal(ours, turbojpeg_decode(jpeg, eighths)));
    }
  }
}

// The windows a random-resized crop picks: anywhere, any shape. At full scale
// and at a reduced one, the window is that region of the whole decode (at
// the same scale), whatever the chroma layout, with the same rounding.
TEST_F(JpegWindow, AWindowIsThatRegionOfTheWholeDecode) {
  at::manual_seed(3);
  for (const auto& name : names()) {
    const std::string jpeg = bytes(name);
    const auto stored = turbojpeg_decode(jpeg, 8);
    const std::int64_t height = stored.size(0), width = stored.size(1);
    for (int trial = 0; trial < 24; ++trial) {
      const auto top = at::randint(0, height - 8, {1}).item<std::int64_t>();
      const auto left = at::randint(0, width - 8, {1}).item<std::int64_t>();
      const auto h = at::randint(1, height - top + 1, {1}).item<std::int64_t>();
      const auto w = at::randint(1, width - left + 1, {1}).item<std::int64_t>();
      const std::int64_t min_side = trial % 2 == 0 ? 0 : std::max<std::int64_t>(1, std::min(h, w) / 3);
      const int eighths = jpeg_scale_eighths(h, w, min_side);
      const auto full = turbojpeg_decode(jpeg, eighths);
      const std::int64_t t = top * eighths / 8, l = left * eighths / 8;
      const std::int64_t b = std::min<std::int64_t>((top + h) * eighths / 8 + ((top + h) * eighths % 8 != 0), full.size(0));
      const std::int64_t r = std::min<std::int64_t>((left + w) * eighths / 8 + ((left + w) * eighths % 8 != 0), full.size(1));
      SCOPED_TRACE(name + ": " + std::to_string(h) + "x" + std::to_string(w) + " at (" + std::to_string(top) + ", " +
                   std::to_string(left) + "), " + std::to_string(eighths) + "/8");
      const auto ours = window_decode(jpeg, {top, left, h, w, min_side});
      const auto region = full.narrow(0, t, b - t).narrow(1, l, r - l);
      ASSERT_EQ(ours.sizes(), region.sizes());
      EXPECT_TRUE(at::equal(ours, region)) << "max difference "
                                           << (ours.to(at::kInt) - region.to(at::kInt)).abs().max().item<int>();
    }
  }
}

// What the datasets get: RGB four bytes apart, the same pixels; resized and
// packed (mirrored or not) they are what contiguous pixels give.
TEST_F(JpegWindow, FourByteRgbIsTheSamePixelsAndResizesTheSame) {
  const std::string jpeg = bytes("420.jpg");
  const DecodeWindow window{40, 60, 200, 300, 0};
  const auto view = decode_image(jpeg, 3, "420.jpg", [&](std::int64_t, std::int64_t) { return window; });
  EXPECT_EQ(view.stride(1), 4);
  const auto contiguous = window_decode(jpeg, window);
  ASSERT_TRUE(at::equal(view, contiguous));
  const auto resized = resize_pixels(view, 224, 224);
  EXPECT_TRUE(at::equal(resized, resize_pixels(contiguous, 224, 224)));
  EXPECT_TRUE(at::equal(packed_pixels(resized), resized.contiguous()));
  EXPECT_TRUE(packed_pixels(resized).is_contiguous());
  EXPECT_TRUE(at::equal(packed_pixels(resized, /*mirror=*/true), resized.flip({1}).contiguous()));
  const auto grey = decode_image(jpeg, 1, "420.jpg", [&](std::int64_t, std::int64_t) { return window; });
  EXPECT_TRUE(at::equal(grey, decode_image(jpeg, 1, "420.jpg").narrow(0, 40, 200).narrow(1, 60, 300)));
}

// Packing four-byte RGB takes four pixels per step (SSSE3) and the rest one
// by one: every width, mirrored or not, gives what ATen's copy gives, and
// nothing is written past the image.
TEST(PackedPixels, FourByteRgbOfEveryWidthPacksAsAtenCopies) {
  const auto four = at::randint(0, 256, {3, 40, 4}, at::kByte);
  for (std::int64_t width : {1, 3, 4, 5, 7, 8, 9, 12, 13, 39, 40})
    for (const bool mirror : {false, true}) {
      const auto rgb = four.narrow(1, 0, width).narrow(2, 0, 3);  // rows 160 bytes apart, pixels 4
      const auto expected = (mirror ? rgb.flip({1}) : rgb).contiguous();
      EXPECT_TRUE(at::equal(packed_pixels(rgb, mirror), expected)) << "width " << width << " mirror " << mirror;
    }
}

TEST_F(JpegWindow, ThreadsDecodingAtOnceGetWhatOneThreadGets) {
  const std::string jpeg = bytes("420.jpg");
  const DecodeWindow window{40, 60, 200, 300, 100};
  const auto alone = window_decode(jpeg, window);
  std::vector<at::Tensor> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) result = window_decode(jpeg, window);
    });
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_TRUE(at::equal(result, alone));
}

// A file cut short: a window in the part that is there decodes (its pixels
// are real); one that reaches the missing part is an error naming the file.
TEST_F(JpegWindow, ATruncatedFileFailsOnlyWhereTheWindowNeedsTheMissingRows) {
  const std::string cut = bytes("420_cut.jpg");
  const auto whole = turbojpeg_decode(bytes("420.jpg"), 8);
  const auto top_rows = window_decode(cut, {0, 0, 40, 500, 0});
  EXPECT_TRUE(at::equal(top_rows, whole.narrow(0, 0, 40)));
  try {
    decode_image(cut, 3, "photos/cut.jpg", [](std::int64_t h, std::int64_t w) { return whole_image(h, w); });
    FAIL() << "a truncated image decoded whole";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "photos/cut.jpg: corrupt JPEG (Premature end of JPEG file)");
  }
  // The thread's decoder is fine after the failure.
  EXPECT_TRUE(at::equal(window_decode(bytes("420.jpg"), whole_image(375, 500)), whole));
}

TEST_F(JpegWindow, AWindowOutsideTheImageIsNamedAsThePluginsBug) {
  try {
    window_decode(bytes("420.jpg"), {300, 0, 100, 100, 0});
    FAIL() << "decoded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not inside the 375x500 image (a plugin bug)"), std::string::npos) << e.what();
  }
}

// A valid progressive JPEG of 8 x 8 pixels whose AC coefficients are sent
// bit by bit in `passes` passes, one scan per coefficient and component:
// tiny, and each scan a pass over the whole image for the decoder.
std::string progressive_jpeg(int passes) {
  std::vector<jpeg_scan_info> scans;
  scans.push_back({3, {0, 1, 2, 0}, 0, 0, 0, 0});  // DC of all three
  for (int pass = 0; pass < passes; ++pass)
    for (int component = 0; component < 3; ++component)
      for (int k = 1; k < 64; ++k) {
        const int bit = passes - 1 - pass;  // successive approximation, high bits first
        scans.push_back({1, {component, 0, 0, 0}, k, k, pass == 0 ? 0 : bit + 1, bit});
      }
  return testing::small_jpeg(scans);
}

TEST(JpegScans, AProgressiveFileWithMoreScansThanTheLimitIsRefused) {
  const std::string within = progressive_jpeg(2);  // 1 + 2 * 189 = 379 scans
  EXPECT_EQ(decode_image(within, 3, "few.jpg").sizes(), (at::IntArrayRef{8, 8, 3}));
  const std::string beyond = progressive_jpeg(3);  // 568 scans
  try {
    decode_image(beyond, 3, "many.jpg");
    FAIL() << "a file of 568 scans decoded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "many.jpg: corrupt JPEG (more than " + std::to_string(kMaxJpegScans) +
                                         " progressive scans: a decompression bomb?)");
  }
}

}  // namespace
}  // namespace orchestrate
