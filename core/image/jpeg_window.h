// JPEG decoding with libjpeg-turbo's libjpeg API, one decoder per thread,
// reused: the header alone, or only a window of the image (DecodeWindow) at
// the smallest DCT scale that keeps it at least its min_side. The TurboJPEG
// API of Debian's libjpeg-turbo (2.1) has no cropping region; the libjpeg
// API's jpeg_crop_scanline and jpeg_skip_scanlines give one: the inverse DCT,
// upsampling and colour conversion run only for the window's columns, and
// rows past the window are not decoded at all.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image_header.h"
#include "orchestrate/decode_window.h"
#include "pixel_decode.h"

namespace orchestrate {

// The JPEG's sides and colour, from its header; an unreadable header throws
// orchestrate::Error naming `source` (no size check: read_image_header's).
ImageHeader read_jpeg_header(std::string_view bytes, const std::string& source);

// Decodes `choose(height, width)`'s window of the JPEG into what `buffer`
// returns: uint8 [h, w, 1 or 3] (grey stays grey), where h x w is the window
// at the scale chosen. An empty `choose` decodes the whole image at full
// scale. The header is checked against max_pixels before anything else.
// four_byte_rgb: a colour image comes as RGBX (PixelLayout::padding).
PixelLayout decode_jpeg_window(std::string_view bytes, const std::string& source, std::int64_t max_pixels,
                               const ChooseWindow& choose, const PixelBuffer& buffer, bool four_byte_rgb = false);

// The libjpeg scale (numerator over 8: 1, 2, 4 or 8) that decodes a window
// of height x width smallest while both of its sides stay at least min_side
// (8, full scale, when min_side is 0 or no smaller scale keeps it). Only
// these: libjpeg-turbo has SIMD inverse DCTs for them, and 3/8, 5/8 ... run
// its plain C ones (12x12, 14x14 for 4:2:0 chroma). Measured on the 2-core
// EPYC, bench-input's CPU time per image was 2 % lower with these alone.
int jpeg_scale_eighths(std::int64_t height, std::int64_t width, std::int64_t min_side);

}  // namespace orchestrate
