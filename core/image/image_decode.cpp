#include "image_decode.h"

#include <ATen/ops/empty.h>

#include <fstream>
#include <sstream>

#include "orchestrate/error.h"
#include "pixel_decode.h"

namespace orchestrate {

namespace {

// Converts [H, W, 1 or 3] uint8 pixels to `channels`, as Pillow's convert()
// does (torchvision's ImageFolder loads through it): grey to RGB repeats the
// plane; RGB to grey is ITU-R 601-2 luma in Pillow's fixed-point form.
at::Tensor convert_channels(const at::Tensor& pixels, std::int64_t channels) {
  const std::int64_t have = pixels.size(2);
  if (have == channels) return pixels;
  if (channels == 3) return pixels.expand({pixels.size(0), pixels.size(1), 3}).contiguous();
  const auto rgb = pixels.to(at::kInt);
  const auto luma = (rgb.select(2, 0) * 19595 + rgb.select(2, 1) * 38470 + rgb.select(2, 2) * 7471 + 0x8000).bitwise_right_shift(16);
  return luma.to(at::kByte).unsqueeze(2).contiguous();
}

// four_byte_rgb: see decode_pixels; the padding stays in memory, out of view.
at::Tensor decode(std::string_view bytes, std::int64_t channels, const std::string& source, const ChooseWindow& choose,
                  std::int64_t max_pixels, bool four_byte_rgb) {
  if (channels != 1 && channels != 3)
    throw Error(source + ": cannot decode to " + std::to_string(channels) + " channels (1 or 3)");
  at::Tensor pixels;
  const PixelLayout layout = decode_pixels(
      bytes, source, max_pixels, choose,
      [&](const PixelLayout& l) {
        pixels = at::empty({l.height, l.width, l.channels}, at::kByte);
        return pixels.data_ptr<std::uint8_t>();
      },
      four_byte_rgb);
  if (layout.padding) return convert_channels(pixels.narrow(2, 0, 3), channels);
  if (layout.alpha) pixels = pixels.narrow(2, 0, layout.channels - 1).contiguous();
  return convert_channels(pixels, channels);
}

}  // namespace

at::Tensor decode_image(std::string_view bytes, std::int64_t channels, const std::string& source,
                        const ChooseWindow& choose, std::int64_t max_pixels) {
  return decode(bytes, channels, source, choose, max_pixels, /*four_byte_rgb=*/channels == 3);
}

at::Tensor decode_image(std::string_view bytes, std::int64_t channels, const std::string& source,
                        std::int64_t min_side, std::int64_t max_pixels) {
  return decode(bytes, channels, source, whole_image_chooser(min_side), max_pixels, /*four_byte_rgb=*/false);
}

at::Tensor read_image(const std::string& path, std::int64_t channels, std::int64_t max_pixels) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": no such image file");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return decode_image(bytes.str(), channels, path, 0, max_pixels);
}

}  // namespace orchestrate
