// The header checks that come before any pixel is allocated: decompression
// bombs, sides of zero and headers that claim more than the file holds. Free
// of LibTorch, so CI also runs it under ASan and UBSan (tests/fuzz).
#include "image_header.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "image_bombs_testing.h"
#include "orchestrate/error.h"
#include "pixel_decode.h"

namespace orchestrate {
namespace {

using testing::jpeg_declaring;
using testing::png_declaring;

std::string refusal(const std::string& bytes, std::int64_t max_pixels = kDefaultMaxImagePixels) {
  try {
    read_image_header(bytes, "bomb.img", max_pixels);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(ImageHeader, ReadsTheSidesOfARealImage) {
  const auto png = read_image_header(png_declaring(8, 8), "a.png", kDefaultMaxImagePixels);
  EXPECT_EQ(png.format, ImageFormat::png);
  EXPECT_EQ(png.width, 8);
  EXPECT_EQ(png.height, 8);
  const auto jpeg = read_image_header(jpeg_declaring(8, 8), "a.jpg", kDefaultMaxImagePixels);
  EXPECT_EQ(jpeg.format, ImageFormat::jpeg);
  EXPECT_EQ(jpeg.width, 8);
}

TEST(ImageHeader, APngBombIsRefusedFromItsHeaderInOneLine) {
  const std::string bomb = png_declaring(100000, 100000);
  ASSERT_LT(bomb.size(), 1000u);
  EXPECT_EQ(refusal(bomb),
            "bomb.img: image of 100000x100000 = 10000000000 pixels exceeds the limit of 89478485 (a decompression "
            "bomb?); raise the dataset's max_image_pixels if it is genuine");
}

TEST(ImageHeader, AJpegBombIsRefusedFromItsHeaderInOneLine) {
  EXPECT_EQ(refusal(jpeg_declaring(65000, 65000)),
            "bomb.img: image of 65000x65000 = 4225000000 pixels exceeds the limit of 89478485 (a decompression "
            "bomb?); raise the dataset's max_image_pixels if it is genuine");
}

TEST(ImageHeader, TheLimitIsTheOneGiven) {
  EXPECT_NE(refusal(png_declaring(8, 8), 63).find("exceeds the limit of 63"), std::string::npos);
  EXPECT_EQ(refusal(png_declaring(8, 8), 64), "");
  EXPECT_EQ(refusal(jpeg_declaring(8, 8), 64), "");
}

TEST(ImageHeader, ZeroSidesAreRefused) {
  // libjpeg-turbo reads a zero height (a DNL-marker JPEG) as unreadable;
  // libpng refuses a zero width in IHDR itself.
  EXPECT_NE(refusal(jpeg_declaring(8, 0)), "");
  EXPECT_NE(refusal(png_declaring(0, 8)).find("bomb.img: not a readable PNG"), std::string::npos);
  EXPECT_NE(refusal(png_declaring(8, 0)).find("bomb.img: not a readable PNG"), std::string::npos);
  EXPECT_EQ(refusal(""), "bomb.img: neither a JPEG nor a PNG file (it is empty)");
}

TEST(ImageHeader, APngWhoseHeaderClaimsMoreThanItsBytesCanHoldIsCorrupt) {
  // 80,000,000 pixels are under the limit, but even one bit each, deflated
  // at zlib's best ratio, needs far more than this file's few hundred bytes.
  EXPECT_NE(refusal(png_declaring(20000, 4000)).find("bomb.img: corrupt PNG (its header declares 20000x4000 pixels, "
                                                     "more than its"),
            std::string::npos);
}

TEST(ImageHeader, BombsAreRefusedBeforeAnyPixelIsAllocated) {
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& bomb : {png_declaring(100000, 100000), jpeg_declaring(65535, 65535),
                                  png_declaring(20000, 4000), jpeg_declaring(9000, 9000)}) {
    bool allocated = false;
    EXPECT_THROW(decode_pixels(bomb, "bomb.img", 1000 * 1000, {}, [&](const PixelLayout&) -> std::uint8_t* {
                   allocated = true;
                   return nullptr;
                 }),
                 Error);
    EXPECT_FALSE(allocated);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
}

}  // namespace
}  // namespace orchestrate
