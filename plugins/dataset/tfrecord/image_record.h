// When a record is a usable training example: its Example has the image and
// label features, the image is a JPEG or PNG that decodes, and the label,
// less label_offset, is a class. The same rules decide at indexing time
// (which records a split holds) and at reading time (the pixels).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "orchestrate/decode_window.h"
#include "orchestrate/image/image_limits.h"
#include "orchestrate/tf_example/labelled_image.h"
#include "orchestrate/tf_example/record_label.h"

namespace orchestrate::tfrecord {

struct RecordRules {
  ExampleKeys keys;
  std::int64_t label_offset = 0;  // subtracted from every stored label (MoXing's labels_offset)
  std::int64_t num_classes = 0;   // declared or named by class_names; 0: counted (any label below kMaxClasses)
  bool verify_images = true;      // decode every image when indexing
  std::int64_t channels = 3;      // what images decode to
  std::int64_t max_image_pixels = kDefaultMaxImagePixels;  // a larger image is refused from its header

  // What an index built under these rules depends on, as text; an index
  // cached under other rules is not reused.
  std::string fingerprint() const;
};

// A record's image and class.
struct ImageRecord {
  LabelledImage image;
  std::int64_t label = 0;  // offset applied
};

// Parses `data` and checks its features and label (not the pixels); a bad
// record throws ExampleError with the cause (class_of_label's for a label).
ImageRecord read_image_record(std::string_view data, const RecordRules& rules);

// The decoded pixels, uint8 [H, W, rules.channels]; an image that does not
// decode throws orchestrate::Error with the cause.
// window: see decode_image (a JPEG decodes only the window, at a reduced
// scale where its min_side allows; empty: the whole image at full scale).
at::Tensor decode_record_image(const ImageRecord& record, const RecordRules& rules,
                               const orchestrate::ChooseWindow& window = {});

// The record's class after every check the rules ask for at indexing time;
// the cause of a bad record is thrown as ExampleError or orchestrate::Error.
std::int64_t check_record(std::string_view data, const RecordRules& rules);

}  // namespace orchestrate::tfrecord
