// Preprocessing: the `[preprocessing]` table. It sits between the dataset and
// the model, in two halves:
//   prepare_sample  per example, on the pipeline's worker threads: decoded
//                   uint8 [H, W, C] of any size to uint8 [h, w, C] at the
//                   output size (resize, crop, flip, colour jitter);
//   finish_batch    per batch, on the training device after the copy: uint8
//                   [N, h, w, C] to the model's float32 [N, C, h, w],
//                   scaled to [0, 1] and normalized (mean/std).
// So the pipeline and the host-to-device copy move uint8, a quarter of float32.
//
// A component is built twice per run: the train variant (random augmentation,
// every random choice drawn from the sample's seed) and the eval variant
// (deterministic). Both must give the same output shape; the model is built
// for it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "orchestrate/api.h"
#include "orchestrate/dataset.h"

namespace orchestrate {

enum class PreprocessingVariant { train, eval };
ORCHESTRATE_API const char* to_string(PreprocessingVariant variant);

// What a preprocessing factory is given. Grows only at the end.
struct PreprocessingContext {
  PreprocessingVariant variant = PreprocessingVariant::train;
  DatasetInfo data;  // the split it serves: channels, and the fixed size (0 when sizes vary)
};

struct ImageShape {
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
};

// How the eval variant turns an image into the model's input, in the terms a
// serving export records (preprocessing.json), so a client can reproduce it.
struct ServingTransform {
  double central_fraction = 1.0;    // first keep this central fraction of each side (Inception's 0.875)
  std::int64_t resize_shorter = 0;  // then: > 0, resize the shorter side to this, keeping the aspect ratio,
                                    // and center-crop to the output size; 0: resize straight to the output size
  std::vector<double> mean{0.0};    // per channel (or one for all), on [0, 1] pixels
  std::vector<double> std{1.0};
};

class ORCHESTRATE_API Preprocessing {
 public:
  virtual ~Preprocessing();
  // The shape of every prepared sample and so of the model's input (C, h, w).
  virtual ImageShape output_shape() const = 0;
  // uint8 [H, W, C] (any H, W) to contiguous uint8 [h, w, C] at output_shape().
  // Every random choice comes from `seed` (SampleRequest::seed), so the same
  // seed gives the same pixels whatever thread calls. Called concurrently.
  virtual at::Tensor prepare_sample(const at::Tensor& pixels, std::uint64_t seed) const = 0;
  // uint8 [N, h, w, C] on the training device to float32 [N, C, h, w] on it.
  virtual at::Tensor finish_batch(const at::Tensor& images) const = 0;
  // The eval variant's transform, for serving exports.
  virtual ServingTransform serving_transform() const = 0;
  // An input whose sides are both at least this holds all the detail the
  // output can show (ResNet's eval: 256, as it resizes the shorter side to
  // that); 0 (the default): the full resolution matters (random crops).
  // Passed to datasets as SampleRequest::min_side.
  virtual std::int64_t min_input_side() const;
};

}  // namespace orchestrate
