// tf.train.Example records (plugins/dataset/tfrecord: labelled_image,
// record_label): any bytes as a record's payload, parsed for the image and
// label features, the label then checked under a few label rules. A bad
// payload must surface as ExampleError (an orchestrate::DataError); one that
// parses must survive serialising and parsing again unchanged.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "orchestrate/error.h"
#include "orchestrate/tf_example/labelled_image.h"
#include "orchestrate/tf_example/record_label.h"

namespace tfrecord = orchestrate::tfrecord;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view payload(reinterpret_cast<const char*>(data), size);
  const tfrecord::ExampleKeys keys;
  tfrecord::LabelledImage image;
  try {
    image = tfrecord::parse_labelled_image(payload, keys);
  } catch (const orchestrate::Error&) {
    return 0;
  }
  const auto again = tfrecord::parse_labelled_image(tfrecord::serialize_labelled_image(image, keys), keys);
  if (again.encoded != image.encoded || again.format != image.format || again.label != image.label) __builtin_trap();
  constexpr auto lowest = std::numeric_limits<std::int64_t>::min();
  for (const tfrecord::LabelRule& rule : {tfrecord::LabelRule{keys.label, 0, 10}, tfrecord::LabelRule{keys.label, 1, 0},
                                          tfrecord::LabelRule{keys.label, lowest, 0},
                                          tfrecord::LabelRule{keys.label, -1, tfrecord::kMaxClasses}}) {
    try {
      const std::int64_t label = tfrecord::class_of_label(image.label, rule);
      const std::int64_t classes = rule.num_classes > 0 ? rule.num_classes : tfrecord::kMaxClasses;
      if (label < 0 || label >= classes) __builtin_trap();  // a label the loss would reject
    } catch (const orchestrate::Error&) {
    }
  }
  return 0;
}
