// The preprocessing of the ImageNet model families, one class for both
// presets (resnet, inception), which differ only in their defaults:
//   train: random-resized crop to size x size (the crop's box is the decode
//          window, so a JPEG decodes only the box), horizontal flip,
//          optional colour jitter (every choice from the sample's seed);
//   eval:  the central fraction, then the shorter side resized to
//          resize_size and a center crop of size x size (ResNet: 256 then
//          224), or straight to size x size (Inception: 0.875 then 299);
//   both:  uint8 -> float32 / 255 -> (x - mean) / std on the device.
// Resampling is core/image's (ATen's antialiased bilinear kernel on uint8,
// torchvision's Resize(antialias=True)).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "orchestrate/params.h"
#include "orchestrate/preprocessing.h"
#include "orchestrate/presets/batch_output_pool.h"
#include "orchestrate/presets/colour_jitter.h"
#include "orchestrate/presets/random_resized_crop.h"

namespace orchestrate::preprocessing {

struct PresetDefaults {
  std::int64_t size;
  std::int64_t resize_size;
  double central_fraction;
  std::vector<double> scale;
  JitterStrength jitter;
  std::vector<double> mean;
  std::vector<double> std;
};

ParamSchema preset_schema(const PresetDefaults& defaults);

class ImagePreset final : public Preprocessing {
 public:
  ImagePreset(const Params& params, const PreprocessingContext& context, const std::string& name);

  ImageShape output_shape() const override { return {channels_, size_, size_}; }
  DecodeWindow decode_window(std::int64_t height, std::int64_t width, std::uint64_t seed) const override;
  at::Tensor prepare_sample(const at::Tensor& pixels, std::uint64_t seed) const override;
  at::Tensor finish_batch(const at::Tensor& images) const override;
  ServingTransform serving_transform() const override;

  // The random crop's window (decode_window's box) to size x size, flipped and jittered.
  at::Tensor train_sample(const at::Tensor& window, std::uint64_t seed) const;
  at::Tensor eval_sample(const at::Tensor& pixels) const;

 private:
  PreprocessingVariant variant_;
  std::int64_t channels_;
  std::int64_t size_;
  std::int64_t resize_size_;
  double central_fraction_;
  CropRanges crop_;
  BatchOutputPool outputs_;  // finish_batch's float batches, reused
  bool flip_;
  JitterStrength jitter_;
  std::vector<double> mean_;  // one per channel
  std::vector<double> std_;
  std::vector<float> scale_;  // per channel: 1 / (255 std)
  std::vector<float> bias_;   // -mean / std

  // scale_ and bias_ as [1, C, 1, 1] on a GPU, copied there once: a copy
  // from pageable host memory at every batch would make the host wait for
  // the device's queue each step.
  struct DeviceChannels {
    at::Device device;
    at::Tensor scale, bias;
  };
  const DeviceChannels& on_device(const at::Device& device) const;
  mutable std::mutex on_device_mutex_;
  mutable std::deque<DeviceChannels> on_devices_;  // one per device seen (a deque: kept references stay valid)
};

}  // namespace orchestrate::preprocessing
