// Which class a stored label names. A label is data the user did not make:
// it may be negative, beyond the classes the recipe declares, or so large
// that label_offset arithmetic or a class count derived from it overflows.
// Each is a bad record (ExampleError naming the label and the valid range),
// never a label that reaches the loss ("Target N out of bounds") or a model
// sized by a garbage value.
#pragma once

#include <cstdint>
#include <string>

namespace orchestrate::tfrecord {

// The most classes a TFRecord data set may have, declared or counted from
// its labels (num_classes = 0). Far beyond real label sets (ImageNet-21k has
// 21,841 classes), and small enough that a class index fits any int32 and a
// counted class count cannot size an absurd model.
inline constexpr std::int64_t kMaxClasses = std::int64_t{1} << 24;  // 16,777,216

struct LabelRule {
  std::string key;               // the feature, as messages name it
  std::int64_t offset = 0;       // subtracted from the stored label (MoXing's labels_offset)
  std::int64_t num_classes = 0;  // a class is in [0, num_classes); 0: in [0, kMaxClasses)
};

// The class of `stored`; outside the range (or overflowing when the offset
// is subtracted) throws ExampleError naming the label and the range.
std::int64_t class_of_label(std::int64_t stored, const LabelRule& rule);

}  // namespace orchestrate::tfrecord
