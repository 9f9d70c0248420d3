// The image and label a tf.train.Example carries, found by feature keys
// (FastNN's by default): the encoded image in a bytes_list, its format in
// another, the label in an int64_list, each holding a single value.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

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

// A payload that is not such an Example; what() is the cause alone.
class ExampleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

LabelledImage parse_labelled_image(std::string_view payload, const ExampleKeys& keys);

// The serialized tf.train.Example holding `image` under `keys` (the format
// feature only when image.format is not empty).
std::string serialize_labelled_image(const LabelledImage& image, const ExampleKeys& keys);

}  // namespace orchestrate::tfrecord
