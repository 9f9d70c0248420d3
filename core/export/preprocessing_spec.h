// What turns a user's image into the model's input, stored beside an exported
// model (preprocessing.json) so `orchestrate predict` and a serving client
// apply exactly what the model was trained on.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace orchestrate {

inline constexpr const char* kPreprocessingFormat = "orchestrate-preprocessing/1";

struct PreprocessingSpec {
  std::int64_t channels = 3;  // 1: convert to grey, 3: to RGB
  std::int64_t height = 0;    // the model's input size: images are resized to it
  std::int64_t width = 0;
  std::string resize = "bilinear_antialias";  // as torchvision's Resize(antialias=True)
  // The eval preprocessing's geometry (ServingTransform): first the central
  // fraction of each side, then either the shorter side resized to
  // resize_shorter and a center crop to height x width (ResNet: 256, 224), or
  // (resize_shorter = 0) a resize straight to height x width.
  double central_fraction = 1.0;
  std::int64_t resize_shorter = 0;
  double scale = 1.0 / 255.0;                 // uint8 pixel values to [0, 1]
  std::vector<double> mean{0.0};              // per channel, subtracted after scaling
  std::vector<double> std{1.0};               // per channel, divided by after the mean
  std::string layout = "NCHW";
  std::string dtype = "float32";
};

std::string to_json_text(const PreprocessingSpec& spec);

// Parses preprocessing.json; errors name `path` and the bad field.
PreprocessingSpec parse_preprocessing_spec(const std::string& text, const std::string& path);

// Decoded uint8 pixels [H, W, spec.channels] to the model's float32 input
// [spec.channels, spec.height, spec.width]: cropped and resized as the eval
// preprocessing does (uint8 resampling, image_transforms.h), or, for a plain
// resize, torchvision's Resize(antialias=True) on a float tensor as before;
// then scaled and normalized.
at::Tensor apply_preprocessing(const at::Tensor& pixels, const PreprocessingSpec& spec);

}  // namespace orchestrate
