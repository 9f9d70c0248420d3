#include "image_transforms.h"

#include <ATen/ops/_upsample_bilinear2d_aa.h>

#include <cmath>
#include <cstdint>
#include <string>

#if defined(__x86_64__) && defined(__GNUC__)
#include <tmmintrin.h>
#endif

#include "orchestrate/error.h"

namespace orchestrate {

namespace {

// RGB pixels that are the first three bytes of four-byte pixels laid out
// row after row with nothing between: a [H, W, 4] tensor narrowed to 3.
bool four_byte_rgb(const at::Tensor& pixels) {
  return pixels.size(2) == 3 && pixels.stride(2) == 1 && pixels.stride(1) == 4 && pixels.stride(0) == 4 * pixels.size(1);
}

}  // namespace

at::Tensor resize_pixels(const at::Tensor& pixels, std::int64_t height, std::int64_t width) {
  if (pixels.size(0) == height && pixels.size(1) == width) return pixels;
  if (four_byte_rgb(pixels)) {
    const std::int64_t h = pixels.size(0), w = pixels.size(1);
    const auto four = pixels.as_strided({1, 4, h, w}, {4 * h * w, 1, 4 * w, 4});  // channels_last, padding included
    const auto resized = at::_upsample_bilinear2d_aa(four, {height, width}, /*align_corners=*/false);
    return resized.squeeze(0).permute({1, 2, 0}).narrow(2, 0, 3);
  }
  // [1, C, H, W] over the [H, W, C] memory: channels_last, the layout the
  // uint8 kernel works in, so no copy on the way in or out.
  const auto image = pixels.permute({2, 0, 1}).unsqueeze(0);
  const auto resized = at::_upsample_bilinear2d_aa(image, {height, width}, /*align_corners=*/false);
  return resized.squeeze(0).permute({1, 2, 0}).contiguous();
}

at::Tensor resize_shorter_side(const at::Tensor& pixels, std::int64_t size) {
  const std::int64_t height = pixels.size(0), width = pixels.size(1);
  const bool tall = height > width;
  const std::int64_t shorter = tall ? width : height, longer = tall ? height : width;
  const auto new_longer = static_cast<std::int64_t>(static_cast<double>(size) * static_cast<double>(longer) /
                                                    static_cast<double>(shorter));
  return tall ? resize_pixels(pixels, new_longer, size) : resize_pixels(pixels, size, new_longer);
}

at::Tensor crop_pixels(const at::Tensor& pixels, std::int64_t top, std::int64_t left, std::int64_t height,
                       std::int64_t width) {
  if (top < 0 || left < 0 || height < 1 || width < 1 || top + height > pixels.size(0) || left + width > pixels.size(1))
    throw Error("crop of " + std::to_string(height) + "x" + std::to_string(width) + " at (" + std::to_string(top) +
                ", " + std::to_string(left) + ") does not fit in a " + std::to_string(pixels.size(0)) + "x" +
                std::to_string(pixels.size(1)) + " image");
  return pixels.narrow(0, top, height).narrow(1, left, width);
}

at::Tensor center_crop(const at::Tensor& pixels, std::int64_t height, std::int64_t width) {
  // std::nearbyint rounds ties to even under the default rounding mode, as Python's round() does.
  const auto top = static_cast<std::int64_t>(std::nearbyint(static_cast<double>(pixels.size(0) - height) / 2.0));
  const auto left = static_cast<std::int64_t>(std::nearbyint(static_cast<double>(pixels.size(1) - width) / 2.0));
  return crop_pixels(pixels, top, left, height, width);
}

at::Tensor central_fraction_crop(const at::Tensor& pixels, double fraction) {
  if (fraction >= 1.0) return pixels;
  const std::int64_t height = pixels.size(0), width = pixels.size(1);
  const auto top = static_cast<std::int64_t>((static_cast<double>(height) - static_cast<double>(height) * fraction) / 2);
  const auto left = static_cast<std::int64_t>((static_cast<double>(width) - static_cast<double>(width) * fraction) / 2);
  return crop_pixels(pixels, top, left, height - 2 * top, width - 2 * left);
}

at::Tensor flip_horizontally(const at::Tensor& pixels) { return pixels.flip({1}); }

namespace {

// Pixels of `channels` bytes, `pixel_stride` apart, rows `row_stride` apart,
// to contiguous rows, mirrored if asked. Channels = 3 is instantiated with the
// count fixed, so the compiler unrolls the common case (RGB); 0 reads it from
// `channels`.
template <int Channels>
void pack_rows(const std::uint8_t* in, std::uint8_t* out, std::int64_t height, std::int64_t width,
               std::int64_t channels, std::int64_t row_stride, std::int64_t pixel_stride, bool mirror) {
  const std::int64_t c_count = Channels > 0 ? Channels : channels;
  for (std::int64_t y = 0; y < height; ++y) {
    const std::uint8_t* row = in + y * row_stride;
    std::uint8_t* out_row = out + y * width * c_count;
    for (std::int64_t x = 0; x < width; ++x) {
      const std::uint8_t* pixel = row + (mirror ? width - 1 - x : x) * pixel_stride;
      for (std::int64_t c = 0; c < c_count; ++c) out_row[x * c_count + c] = pixel[c];
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// RGB pixels four bytes apart (rows `row_stride` apart) to packed RGB, four pixels per step:
// one SSSE3 byte shuffle drops the padding (and, mirrored, reverses the
// four). Measured on the 2-core EPYC, 224 x 224 mirrored: 7 us against the
// byte loop's 32 us, which the compiler does not vectorise, with or without
// AVX2. A load may read the fourth byte of a row's last pixel: pixels four
// bytes apart are the first three of four (a narrowed [H, W, 4] tensor).
__attribute__((target("ssse3"))) void pack_four_byte_rgb_ssse3(const std::uint8_t* in, std::uint8_t* out,
                                                              std::int64_t height, std::int64_t width,
                                                              std::int64_t row_stride, bool mirror) {
  const __m128i keep = _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
  const __m128i reverse = _mm_setr_epi8(12, 13, 14, 8, 9, 10, 4, 5, 6, 0, 1, 2, -1, -1, -1, -1);
  const __m128i order = mirror ? reverse : keep;
  for (std::int64_t y = 0; y < height; ++y) {
    const std::uint8_t* row = in + y * row_stride;
    std::uint8_t* out_row = out + y * width * 3;
    std::int64_t x = 0;
    // Each 16-byte store fills 12 bytes and spills 4 that the next step
    // overwrites; the last few pixels of the row go byte by byte, so no
    // store passes its end.
    for (; x + 8 <= width; x += 4) {
      const std::int64_t from = mirror ? width - 4 - x : x;
      const __m128i pixels = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + from * 4));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out_row + x * 3), _mm_shuffle_epi8(pixels, order));
    }
    for (; x < width; ++x) {
      const std::uint8_t* pixel = row + (mirror ? width - 1 - x : x) * 4;
      for (int c = 0; c < 3; ++c) out_row[x * 3 + c] = pixel[c];
    }
  }
}

// False on a CPU without SSSE3 (every x86-64 CPU since about 2008 has it):
// the caller packs byte by byte.
bool pack_four_byte_rgb(const std::uint8_t* in, std::uint8_t* out, std::int64_t height, std::int64_t width,
                        std::int64_t row_stride, bool mirror) {
  static const bool ssse3 = __builtin_cpu_supports("ssse3");
  if (ssse3) pack_four_byte_rgb_ssse3(in, out, height, width, row_stride, mirror);
  return ssse3;
}
#else
bool pack_four_byte_rgb(const std::uint8_t*, std::uint8_t*, std::int64_t, std::int64_t, std::int64_t, bool) {
  return false;
}
#endif

}  // namespace

// By hand: a loop over rows and pixels, because at::Tensor::contiguous() on
// four-byte RGB pixels takes ATen's generic strided copy (measured: 0.46 ms
// for 224 x 224, more than the resize).
at::Tensor packed_pixels(const at::Tensor& pixels, bool mirror) {
  if (!(pixels.stride(2) == 1 && pixels.scalar_type() == at::kByte)) {
    const auto out = mirror ? flip_horizontally(pixels) : pixels;
    return out.contiguous();
  }
  const std::int64_t height = pixels.size(0), width = pixels.size(1), channels = pixels.size(2);
  if (!mirror && pixels.is_contiguous()) return pixels;
  auto out = at::empty({height, width, channels}, pixels.options());
  if (channels == 3 && pixels.stride(1) == 4 &&
      pack_four_byte_rgb(pixels.data_ptr<std::uint8_t>(), out.data_ptr<std::uint8_t>(), height, width,
                         pixels.stride(0), mirror))
    return out;
  const auto pack = channels == 3 ? pack_rows<3> : pack_rows<0>;
  pack(pixels.data_ptr<std::uint8_t>(), out.data_ptr<std::uint8_t>(), height, width, channels, pixels.stride(0),
       pixels.stride(1), mirror);
  return out;
}

}  // namespace orchestrate
