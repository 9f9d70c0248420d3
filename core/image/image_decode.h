// JPEG and PNG files to pixels, with libjpeg-turbo and libpng.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "image_header.h"
#include "image_limits.h"
#include "orchestrate/decode_window.h"

namespace orchestrate {

// Decodes a JPEG or PNG image into uint8 [height, width, channels], converted
// to `channels` (1: grey, 3: RGB); alpha is dropped, 16-bit PNG is reduced to
// 8 bits. A corrupt or unsupported file is an Error naming `source` and why.
//
// `choose` (may be empty: the whole image, full scale) picks, from the
// stored sides, the window of the image to return (decode_window.h): a
// JPEG then decodes only the window's rows and columns, at the smallest of
// libjpeg-turbo's DCT scales (1/8 ... 8/8 of each side, inside the inverse
// DCT, so far less work than a full decode) that keeps both of its sides at
// least the window's min_side. A PNG is decoded whole and the window cut out.
// A colour JPEG's window, decoded to RGB, comes as a view of four bytes a
// pixel (the fourth unused, stride(1) == 4): the layout resize_pixels works
// in without repacking; packed_pixels (image_transforms.h) makes it
// contiguous.
//
// An image whose header declares more than max_pixels pixels (width x
// height) is refused as corrupt before anything is allocated.
at::Tensor decode_image(std::string_view bytes, std::int64_t channels, const std::string& source,
                        const ChooseWindow& choose, std::int64_t max_pixels = kDefaultMaxImagePixels);

// The whole image, at a reduced JPEG scale where both sides stay at least
// min_side (0: full scale). For images much larger than they will be
// resized to anyway.
at::Tensor decode_image(std::string_view bytes, std::int64_t channels, const std::string& source,
                        std::int64_t min_side = 0, std::int64_t max_pixels = kDefaultMaxImagePixels);

// Reads and decodes the file at `path`.
at::Tensor read_image(const std::string& path, std::int64_t channels,
                      std::int64_t max_pixels = kDefaultMaxImagePixels);

}  // namespace orchestrate
