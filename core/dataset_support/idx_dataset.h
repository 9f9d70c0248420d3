// An IDX image/label pair as a dataset, kept in memory as uint8: the reader
// behind the `idx` plugin and the `fashion_mnist` preset (which only fills
// in Fashion-MNIST's file names, directory and class names), so both read,
// check and report a file the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "idx_file.h"
#include "orchestrate/dataset.h"

namespace orchestrate {

struct IdxDatasetSpec {
  std::string dataset;  // the plugin, as messages name it: "[data] <dataset>: ..."
  IdxSource images;     // this split's files
  IdxSource labels;
  IdxSource train_labels;  // counts the classes when class_names is empty
  std::vector<std::string> class_names;  // empty: the train split's largest label plus one classes, unnamed
  std::int64_t limit = 0;                // keep the first N examples (0: all)
  // Keep only these classes, relabelled 0, 1, ... in this order (empty: all);
  // with class_names, the kept names follow.
  std::vector<std::int64_t> classes;
  std::int64_t side = 0;        // every image must be side x side (0: any size) ...
  std::string wrong_side_fix;   // ... or this ends the message
  std::string count_fix;        // ends the message of image and label counts that differ
  std::string label_fix;        // ends the message of a label outside the classes
};

std::unique_ptr<Dataset> make_idx_dataset(const IdxDatasetSpec& spec, DatasetSplit split);

}  // namespace orchestrate
