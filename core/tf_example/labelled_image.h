// The image and label a tf.train.Example carries, found by feature keys
// (FastNN's by default): the encoded image in a bytes_list, its format in
// another, the label in an int64_list, each holding a single value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "orchestrate/error.h"

namespace orchestrate::tfrecord {

struct ExampleKeys {
  std::string image = "image/encoded";
  std::string format = "image/format";
  std::string label = "image/class/label";
};

struct LabelledImage {
  std::string encoded;
  std::string format;      // "" when the Example has no format feature (it is optional)
  std::int64_t label = 0;  // as stored, before any label offset
};

// A payload that is not such an Example; what() is the cause alone. A
// DataError, so a fuzz target or tool can tell bad input from a bug.
class ExampleError : public DataError {
 public:
  using DataError::DataError;
};

// Parses any bytes (a fuzz target calls it on arbitrary input): a payload
// that is not such an Example throws ExampleError.
LabelledImage parse_labelled_image(std::string_view payload, const ExampleKeys& keys);

// The serialized tf.train.Example holding `image` under `keys` (the format
// feature only when image.format is not empty).
std::string serialize_labelled_image(const LabelledImage& image, const ExampleKeys& keys);

}  // namespace orchestrate::tfrecord
