#include "record_label.h"

#include "labelled_image.h"

namespace orchestrate::tfrecord {

std::int64_t class_of_label(std::int64_t stored, const LabelRule& rule) {
  const std::int64_t classes = rule.num_classes > 0 ? rule.num_classes : kMaxClasses;
  const std::string range = "[0, " + std::to_string(classes) + ")";
  std::string as_stored = rule.key + " " + std::to_string(stored);
  if (rule.offset != 0) as_stored += " less label_offset " + std::to_string(rule.offset);
  std::int64_t label = 0;
  if (__builtin_sub_overflow(stored, rule.offset, &label))
    throw ExampleError("label (" + as_stored + ") overflows a 64-bit integer; a class is in " + range);
  if (label < 0) throw ExampleError("label " + std::to_string(label) + " (" + as_stored + ") is negative");
  if (label >= classes) {
    // Counted classes name their limit, so a user can tell it from a typo'd num_classes.
    const std::string why = rule.num_classes > 0 ? "" : ", the most classes a data set may have";
    throw ExampleError("label " + std::to_string(label) + " (" + as_stored + ") is outside " + range + why);
  }
  return label;
}

}  // namespace orchestrate::tfrecord
