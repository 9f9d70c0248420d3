// A dataset's examples as the `none` preprocessing hands them to a model:
// stacked, float32 [N, C, H, W], pixels / 255. Dataset tests state expected
// pixels on that scale.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "orchestrate/dataset.h"

namespace orchestrate::testing {

inline Batch float_batch(const Dataset& dataset, const std::vector<std::int64_t>& indices) {
  Batch batch = stack_examples(dataset, indices);
  batch.images = batch.images.permute({0, 3, 1, 2}).to(at::kFloat).contiguous().div_(255.0);
  return batch;
}

}  // namespace orchestrate::testing
