// JPEG header checks and decoding (core/image: image_header, pixel_decode)
// with libjpeg-turbo, at full size and at a reduced DCT scale.
#include "image_decoding.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  orchestrate::fuzz::decode_both_ways(data, size, orchestrate::ImageFormat::jpeg);
  return 0;
}
