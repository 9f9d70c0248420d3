#include "image_record.h"

#include <algorithm>
#include <cctype>

#include "orchestrate/image/image_decode.h"

namespace orchestrate::tfrecord {

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// TensorFlow's image converters write "JPEG" or "png"; anything else (FastNN
// also knows "raw") is a format this reader does not decode.
void check_format(const LabelledImage& image, const ExampleKeys& keys) {
  if (image.format.empty()) return;
  const std::string format = lower(image.format);
  if (format != "jpeg" && format != "jpg" && format != "png")
    throw ExampleError("unsupported " + keys.format + " '" + image.format + "' (JPEG and PNG are decoded)");
}

}  // namespace

std::string RecordRules::fingerprint() const {
  return "image=" + keys.image + "\nformat=" + keys.format + "\nlabel=" + keys.label +
         "\nlabel_offset=" + std::to_string(label_offset) + "\nnum_classes=" + std::to_string(num_classes) +
         "\nverify_images=" + (verify_images ? "1" : "0") + "\nmax_image_pixels=" + std::to_string(max_image_pixels) +
         "\n";
}

ImageRecord read_image_record(std::string_view data, const RecordRules& rules) {
  ImageRecord record{parse_labelled_image(data, rules.keys), 0};
  if (record.image.encoded.empty()) throw ExampleError("zero-byte image in feature '" + rules.keys.image + "'");
  check_format(record.image, rules.keys);
  record.label = class_of_label(record.image.label, {rules.keys.label, rules.label_offset, rules.num_classes});
  return record;
}

at::Tensor decode_record_image(const ImageRecord& record, const RecordRules& rules,
                               const orchestrate::ChooseWindow& window) {
  return decode_image(record.image.encoded, rules.channels, rules.keys.image, window, rules.max_image_pixels);
}

std::int64_t check_record(std::string_view data, const RecordRules& rules) {
  const auto record = read_image_record(data, rules);
  if (rules.verify_images) decode_record_image(record, rules);
  return record.label;
}

}  // namespace orchestrate::tfrecord
