// The dataset interface: random access to labelled images.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "orchestrate/api.h"

namespace orchestrate {

enum class DatasetSplit { train, test };
ORCHESTRATE_API const char* to_string(DatasetSplit split);

struct DatasetInfo {
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::int64_t num_classes = 0;
  std::vector<std::string> class_names;  // may be empty
};

struct Batch {
  at::Tensor images;  // float32 [N, C, H, W], values in [0, 1]
  at::Tensor labels;  // int64 [N], in [0, num_classes)
};

class ORCHESTRATE_API Dataset {
 public:
  virtual ~Dataset();
  virtual DatasetInfo info() const = 0;
  virtual std::int64_t size() const = 0;
  // The examples at `indices`, in that order. Called from several pipeline
  // threads at once, so it must be safe to call concurrently.
  virtual Batch get_batch(const std::vector<std::int64_t>& indices) const = 0;
};

}  // namespace orchestrate
