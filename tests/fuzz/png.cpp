// PNG header checks and decoding (core/image: image_header, pixel_decode)
// with libpng, as image folders and TFRecords feed them.
#include "image_decoding.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  orchestrate::fuzz::decode_both_ways(data, size, orchestrate::ImageFormat::png);
  return 0;
}
