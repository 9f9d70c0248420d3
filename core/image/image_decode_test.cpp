// Decoding against Pillow, the decoder torchvision's ImageFolder uses.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "image_bombs_testing.h"
#include "image_decode.h"
#include "image_transforms.h"
#include "orchestrate/error.h"
#include "orchestrate/testing/python_reference.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate {
namespace {

using testing::ScratchDir;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

at::Tensor raw_pixels(const std::string& path, std::int64_t height, std::int64_t width, std::int64_t channels) {
  const std::string bytes = read_bytes(path);
  return at::from_blob(const_cast<char*>(bytes.data()), {height, width, channels}, at::kByte).clone();
}

// Pillow writes each file and dumps what it decodes it to (mode L or RGB).
class ImageDecode : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::run_python(R"(
import numpy, PIL.Image as I
d = ")" + dir_.path().string() + R"("
rng = numpy.random.default_rng(7)
# A smooth picture with noise: JPEG's worst and best cases in one.
y, x = numpy.mgrid[0:37, 0:53]
rgb = numpy.stack([x * 4, y * 6, (x + y) * 3], -1) + rng.integers(0, 40, (37, 53, 3))
rgb = rgb.clip(0, 255).astype(numpy.uint8)
I.fromarray(rgb).save(d + "/rgb.png")
I.fromarray(numpy.dstack([rgb, rng.integers(0, 256, (37, 53), dtype=numpy.uint8)])).save(d + "/rgba.png")
I.fromarray(rgb[:, :, 0]).save(d + "/grey.png")
I.fromarray(rgb).save(d + "/rgb.jpg", quality=90)
I.fromarray(rgb[:, :, 1]).save(d + "/grey.jpg", quality=90)
for name in ["rgb.png", "grey.png", "rgb.jpg", "grey.jpg"]:
    for mode in ["RGB", "L"]:
        numpy.asarray(I.open(d + "/" + name).convert(mode)).tofile(d + "/" + name + "." + mode + ".raw")
numpy.asarray(I.open(d + "/rgba.png").convert("RGB")).tofile(d + "/rgba.png.RGB.raw")
open(d + "/truncated.jpg", "wb").write(open(d + "/rgb.jpg", "rb").read()[:600])
open(d + "/truncated.png", "wb").write(open(d + "/rgb.png", "rb").read()[:300])
open(d + "/text.jpg", "w").write("not an image")
)");
  }
  std::string file(const std::string& name) const { return dir_.file(name); }
  ScratchDir dir_;
};

TEST_F(ImageDecode, PngMatchesPillowExactly) {
  for (const char* name : {"rgb.png", "grey.png"}) {
    EXPECT_TRUE(at::equal(read_image(file(name), 3), raw_pixels(file(std::string(name) + ".RGB.raw"), 37, 53, 3)))
        << name;
  }
  EXPECT_TRUE(at::equal(read_image(file("grey.png"), 1), raw_pixels(file("grey.png.L.raw"), 37, 53, 1)));
}

TEST_F(ImageDecode, PngAlphaIsDroppedAndRgbBecomesGreyAsPillowDoes) {
  EXPECT_TRUE(at::equal(read_image(file("rgba.png"), 3), raw_pixels(file("rgba.png.RGB.raw"), 37, 53, 3)));
  EXPECT_TRUE(at::equal(read_image(file("rgb.png"), 1), raw_pixels(file("rgb.png.L.raw"), 37, 53, 1)));
}

TEST_F(ImageDecode, JpegMatchesPillowWithinOneLevel) {
  for (const char* name : {"rgb.jpg", "grey.jpg"}) {
    const auto ours = read_image(file(name), 3).to(at::kInt);
    const auto pillow = raw_pixels(file(std::string(name) + ".RGB.raw"), 37, 53, 3).to(at::kInt);
    EXPECT_LE((ours - pillow).abs().max().item<int>(), 1) << name;
  }
  for (const char* name : {"rgb.jpg", "grey.jpg"}) {
    const auto grey = read_image(file(name), 1).to(at::kInt);
    const auto pillow = raw_pixels(file(std::string(name) + ".L.raw"), 37, 53, 1).to(at::kInt);
    EXPECT_LE((grey - pillow).abs().max().item<int>(), 1) << name;
  }
}

TEST_F(ImageDecode, CorruptFilesAreErrorsNamingTheFile) {
  for (const char* name : {"truncated.jpg", "truncated.png", "text.jpg"}) {
    try {
      read_image(file(name), 3);
      FAIL() << name << " decoded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(file(name) + ": "), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(read_image(file("missing.png"), 3), UsageError);
}

// A decompression bomb is refused from its header, before the tensor is
// allocated: at once, whatever the declared size (a decode of 100000 x
// 100000 RGB would need 30 GB), and in one line naming the file.
TEST(ImageBombs, AreRefusedFromTheirHeadersAtOnceInOneLine) {
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& bomb : {testing::png_declaring(100000, 100000), testing::jpeg_declaring(65000, 65000)}) {
    try {
      decode_image(bomb, 3, "photos/cat/bomb.img");
      FAIL() << "a bomb decoded";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.find("photos/cat/bomb.img: image of "), 0u) << message;
      EXPECT_NE(message.find("exceeds the limit of 89478485 (a decompression bomb?); raise the dataset's "
                             "max_image_pixels if it is genuine"),
                std::string::npos)
          << message;
      EXPECT_EQ(message.find('\n'), std::string::npos);
      EXPECT_EQ(e.exit_code(), ExitCode::runtime_failure);
    }
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
}

TEST(ImageBombs, TheLimitIsTheCallersToRaise) {
  const std::string png = testing::png_declaring(8, 8), jpeg = testing::jpeg_declaring(8, 8);
  EXPECT_THROW(decode_image(png, 3, "a.png", 0, 63), Error);
  EXPECT_THROW(decode_image(jpeg, 3, "a.jpg", 0, 63), Error);
  EXPECT_EQ(decode_image(png, 3, "a.png", 0, 64).sizes(), (at::IntArrayRef{8, 8, 3}));
  EXPECT_EQ(decode_image(jpeg, 1, "a.jpg", 0, 64).sizes(), (at::IntArrayRef{8, 8, 1}));
}

// A 3000x4000 photo-like JPEG (real Fashion-MNIST pictures, enlarged, one
// per channel) decoded for ResNet's evaluation (shorter side 256): at 1/8
// scale in the DCT, then resized, against a full decode then resized.
TEST(JpegDctScaling, ReducedDecodeIsCloseToFullDecodeAndFaster) {
  ScratchDir dir;
  const std::string path = dir.file("large.jpg");
  testing::run_python(R"(
import gzip, numpy as np
from PIL import Image
raw = gzip.open("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz").read()
photos = np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 28, 28)
planes = [np.asarray(Image.fromarray(photos[k]).resize((4000, 3000), Image.BICUBIC)) for k in (0, 1, 2)]
Image.fromarray(np.stack(planes, axis=2)).save(")" + path + R"(", quality=90)
)");
  const std::string bytes = read_bytes(path);
  const auto full = decode_image(bytes, 3, path);
  const auto reduced = decode_image(bytes, 3, path, 256);
  ASSERT_EQ(full.sizes(), (at::IntArrayRef{3000, 4000, 3}));
  EXPECT_EQ(reduced.sizes(), (at::IntArrayRef{375, 500, 3}));  // 1/8: the smallest with both sides >= 256
  EXPECT_EQ(decode_image(bytes, 3, path, 400).sizes(), (at::IntArrayRef{750, 1000, 3}));  // 1/4
  EXPECT_EQ(decode_image(bytes, 3, path, 5000).sizes(), full.sizes());                     // never enlarged

  const auto from_full = resize_shorter_side(full, 256).to(at::kFloat);
  const auto from_reduced = resize_shorter_side(reduced, 256).to(at::kFloat);
  ASSERT_EQ(from_full.sizes(), from_reduced.sizes());
  const double mean_difference = (from_full - from_reduced).abs().mean().item<double>();
  std::cout << "DCT-scaled decode + resize vs full decode + resize: mean |difference| " << mean_difference
            << " levels of 255, max " << (from_full - from_reduced).abs().max().item<double>() << "\n";
  EXPECT_LE(mean_difference, 0.5);  // measured 0.19
  EXPECT_LE((from_full - from_reduced).abs().max().item<double>(), 8);  // measured 2

  const auto time_ms = [&](std::int64_t min_side) {
    double best = 1e9;
    for (int i = 0; i < 3; ++i) {
      const auto start = std::chrono::steady_clock::now();
      resize_shorter_side(decode_image(bytes, 3, path, min_side), 256);
      best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
  };
  const double full_ms = time_ms(0), reduced_ms = time_ms(256);
  std::cout << "3000x4000 JPEG to shorter side 256: full decode " << full_ms << " ms, DCT-scaled decode " << reduced_ms
            << " ms (" << full_ms / reduced_ms << "x faster)\n";
}

}  // namespace
}  // namespace orchestrate
