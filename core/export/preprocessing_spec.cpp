#include "export/preprocessing_spec.h"

#include <ATen/ops/tensor.h>
#include <nlohmann/json.hpp>

#include "orchestrate/error.h"
#include "orchestrate/image/image_resize.h"
#include "orchestrate/image/image_transforms.h"

namespace orchestrate {

std::string to_json_text(const PreprocessingSpec& spec) {
  const nlohmann::ordered_json json{{"format", kPreprocessingFormat},
                                    {"color", spec.channels == 1 ? "grey" : "rgb"},
                                    {"channels", spec.channels},
                                    {"height", spec.height},
                                    {"width", spec.width},
                                    {"resize", spec.resize},
                                    {"central_fraction", spec.central_fraction},
                                    {"resize_shorter", spec.resize_shorter},
                                    {"scale", spec.scale},
                                    {"mean", spec.mean},
                                    {"std", spec.std},
                                    {"layout", spec.layout},
                                    {"dtype", spec.dtype}};
  return json.dump(2) + "\n";
}

PreprocessingSpec parse_preprocessing_spec(const std::string& text, const std::string& path) {
  PreprocessingSpec spec;
  try {
    const auto json = nlohmann::json::parse(text);
    if (json.value("format", "") != kPreprocessingFormat)
      throw Error(path + ": format is not \"" + std::string(kPreprocessingFormat) + "\"; re-export the model");
    spec.channels = json.at("channels").get<std::int64_t>();
    spec.height = json.at("height").get<std::int64_t>();
    spec.width = json.at("width").get<std::int64_t>();
    spec.resize = json.at("resize").get<std::string>();
    // Absent from exports made before presets: a plain resize.
    spec.central_fraction = json.value("central_fraction", 1.0);
    spec.resize_shorter = json.value("resize_shorter", std::int64_t{0});
    spec.scale = json.at("scale").get<double>();
    spec.mean = json.at("mean").get<std::vector<double>>();
    spec.std = json.at("std").get<std::vector<double>>();
    spec.layout = json.at("layout").get<std::string>();
    spec.dtype = json.at("dtype").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not a valid preprocessing spec (" + e.what() + "); re-export the model");
  }
  const auto per_channel = [&](const std::vector<double>& v) {
    return v.size() == 1 || static_cast<std::int64_t>(v.size()) == spec.channels;
  };
  if ((spec.channels != 1 && spec.channels != 3) || spec.height < 1 || spec.width < 1 || !per_channel(spec.mean) ||
      !per_channel(spec.std) || spec.resize != "bilinear_antialias" || !(spec.central_fraction > 0) ||
      spec.central_fraction > 1 || spec.resize_shorter < 0 || spec.layout != "NCHW" || spec.dtype != "float32")
    throw Error(path + ": unsupported preprocessing (channels 1 or 3, a positive size, one mean/std per channel, "
                       "bilinear_antialias resize, NCHW float32); re-export the model with this orchestrate");
  return spec;
}

at::Tensor apply_preprocessing(const at::Tensor& pixels, const PreprocessingSpec& spec) {
  at::Tensor image;
  if (spec.central_fraction >= 1.0 && spec.resize_shorter == 0) {
    image = resize_to_chw_float(pixels, spec.height, spec.width) * spec.scale;
  } else {
    auto geometry = central_fraction_crop(pixels, spec.central_fraction);
    geometry = spec.resize_shorter > 0
                   ? center_crop(resize_shorter_side(geometry, spec.resize_shorter), spec.height, spec.width)
                   : resize_pixels(geometry, spec.height, spec.width);
    image = geometry.permute({2, 0, 1}).to(at::kFloat) * spec.scale;
  }
  const auto per_channel = [](const std::vector<double>& v) {
    return at::tensor(std::vector<float>(v.begin(), v.end())).view({-1, 1, 1});
  };
  return ((image - per_channel(spec.mean)) / per_channel(spec.std)).contiguous();
}

}  // namespace orchestrate
