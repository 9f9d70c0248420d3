#include "image_decode.h"

#include <ATen/ops/empty.h>
#include <png.h>
#include <turbojpeg.h>

#include <fstream>
#include <tuple>
#include <utility>
#include <memory>
#include <sstream>

#include "orchestrate/error.h"

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

// The scaled size libjpeg-turbo offers that is smallest while both sides stay
// at least `min_side` (the full size when none is smaller).
std::pair<int, int> reduced_jpeg_size(int width, int height, std::int64_t min_side) {
  std::pair<int, int> best{width, height};
  if (min_side <= 0) return best;
  int count = 0;
  const tjscalingfactor* factors = tjGetScalingFactors(&count);
  for (int i = 0; factors && i < count; ++i) {
    const tjscalingfactor f = factors[i];
    if (f.num > f.denom) continue;  // enlarging: never
    const int w = TJSCALED(width, f), h = TJSCALED(height, f);
    if (w >= min_side && h >= min_side && static_cast<std::int64_t>(w) * h < static_cast<std::int64_t>(best.first) * best.second)
      best = {w, h};
  }
  return best;
}

at::Tensor decode_jpeg(std::string_view bytes, const std::string& source, std::int64_t min_side) {
  const std::unique_ptr<void, int (*)(tjhandle)> handle(tjInitDecompress(), tjDestroy);
  if (!handle) throw Error("cannot start the JPEG decoder: " + std::string(tjGetErrorStr()));
  auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto size = static_cast<unsigned long>(bytes.size());
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(handle.get(), data, size, &width, &height, &subsampling, &colorspace) != 0)
    throw Error(source + ": not a readable JPEG (" + tjGetErrorStr2(handle.get()) + ")");
  const bool grey = colorspace == TJCS_GRAY;
  // tjDecompress2 picks the DCT scaling factor that fits width x height.
  std::tie(width, height) = reduced_jpeg_size(width, height, min_side);
  auto pixels = at::empty({height, width, grey ? 1 : 3}, at::kByte);
  if (tjDecompress2(handle.get(), data, size, pixels.data_ptr<std::uint8_t>(), width, 0, height,
                    grey ? TJPF_GRAY : TJPF_RGB, TJFLAG_ACCURATEDCT) != 0) {
    // libjpeg reports a truncated file only as a warning and fills the rest
    // grey; a training sample or a prediction must not be made of that.
    // Other warnings (stray bytes between markers) are common and harmless.
    const std::string why = tjGetErrorStr2(handle.get());
    if (tjGetErrorCode(handle.get()) == TJERR_FATAL || why.find("Premature end") != std::string::npos)
      throw Error(source + ": corrupt JPEG (" + why + ")");
  }
  return pixels;
}

at::Tensor decode_png(std::string_view bytes, const std::string& source) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()))
    throw Error(source + ": not a readable PNG (" + image.message + ")");
  // Read with alpha, then drop it: what Pillow's convert() does, where
  // asking libpng for no alpha would composite onto a background instead.
  const bool color = (image.format & PNG_FORMAT_FLAG_COLOR) != 0;
  image.format = color ? PNG_FORMAT_RGBA : PNG_FORMAT_GA;
  const std::int64_t stored = color ? 4 : 2;
  auto pixels = at::empty({image.height, image.width, stored}, at::kByte);
  if (!png_image_finish_read(&image, nullptr, pixels.data_ptr<std::uint8_t>(), 0, nullptr)) {
    const std::string why = image.message;
    png_image_free(&image);
    throw Error(source + ": corrupt PNG (" + why + ")");
  }
  return pixels.narrow(2, 0, stored - 1).contiguous();
}

}  // namespace

ImageFormat sniff_image_format(std::string_view bytes) {
  if (bytes.size() >= 3 && static_cast<unsigned char>(bytes[0]) == 0xFF &&
      static_cast<unsigned char>(bytes[1]) == 0xD8 && static_cast<unsigned char>(bytes[2]) == 0xFF)
    return ImageFormat::jpeg;
  if (bytes.size() >= 8 && bytes.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8)) return ImageFormat::png;
  return ImageFormat::unknown;
}

at::Tensor decode_image(std::string_view bytes, std::int64_t channels, const std::string& source,
                        std::int64_t min_side) {
  if (channels != 1 && channels != 3)
    throw Error(source + ": cannot decode to " + std::to_string(channels) + " channels (1 or 3)");
  switch (sniff_image_format(bytes)) {
    case ImageFormat::jpeg: return convert_channels(decode_jpeg(bytes, source, min_side), channels);
    case ImageFormat::png: return convert_channels(decode_png(bytes, source), channels);
    case ImageFormat::unknown: break;
  }
  throw Error(source + ": neither a JPEG nor a PNG file (" +
              (bytes.empty() ? std::string("it is empty") : "its first bytes are not an image signature") + ")");
}

at::Tensor read_image(const std::string& path, std::int64_t channels) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": no such image file");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return decode_image(bytes.str(), channels, path);
}

}  // namespace orchestrate
