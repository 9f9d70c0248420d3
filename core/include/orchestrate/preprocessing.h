// Preprocessing: the `[preprocessing]` table. It sits between the dataset and
// the model, in two halves:
//   decode_window   per example, before it is decoded: from the stored
//                   image's sides, the part of it the sample is made from
//                   (a random crop's box), so the decoder skips the rest;
//   prepare_sample  per example, on the pipeline's worker threads: that
//                   window's uint8 [H, W, C], at any scale, to uint8
//                   [h, w, C] at the output size (resize, flip, jitter);
//   finish_batch    per batch: uint8 [N, h, w, C] to the model's float32
//                   [N, C, h, w], scaled to [0, 1] and normalized
//                   (mean/std). On a CUDA device after the copy, so the
//                   pipeline and the copy move uint8, a quarter of float32;
//                   for CPU training on the pipeline thread that completes
//                   the batch, so the training thread only trains.
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
  // Which window of a stored image of height x width the sample for `seed`
  // is made from, and how small it may be decoded (decode_window.h). Drawn
  // from the seed alone, like every random choice. The default: the whole
  // image at full scale.
  virtual DecodeWindow decode_window(std::int64_t height, std::int64_t width, std::uint64_t seed) const;
  // decode_window's pixels, uint8 [H, W, C] at any scale of at least the
  // window's min_side (not always contiguous: a windowed JPEG's RGB pixels
  // may be four bytes apart), to contiguous uint8 [h, w, C] at output_shape(). Every
  // random choice comes from `seed` (SampleRequest::seed), so the same seed
  // gives the same pixels whatever thread calls. Called concurrently.
  virtual at::Tensor prepare_sample(const at::Tensor& pixels, std::uint64_t seed) const = 0;
  // uint8 [N, h, w, C] on the training device to float32 [N, C, h, w] on
  // it. Called concurrently on a CPU device (each pipeline thread finishes
  // the batches it completes). BatchOutputPool (orchestrate/presets) keeps
  // the output batches for reuse.
  virtual at::Tensor finish_batch(const at::Tensor& images) const = 0;
  // The eval variant's transform, for serving exports.
  virtual ServingTransform serving_transform() const = 0;
};

// A whole stored image to the sample for `seed`: its decode_window cut out
// (at full scale), then prepare_sample. What the host does for a dataset
// that does not decode windows; tools and tests use it on whole images.
ORCHESTRATE_API at::Tensor prepare_whole_image(const Preprocessing& preprocessing, const at::Tensor& pixels,
                                               std::uint64_t seed);

}  // namespace orchestrate
