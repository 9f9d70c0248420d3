#include "image_preset.h"

#include <ATen/ATen.h>

#include <cmath>
#include <numeric>

#include "orchestrate/error.h"
#include "orchestrate/image/image_transforms.h"
#include "orchestrate/presets/normalize_planes.h"

namespace orchestrate::preprocessing {

namespace {

// One value per channel: as given, one for all, or (grey data, three values
// given) their average, so the RGB defaults serve grey images too.
std::vector<double> per_channel(const std::vector<double>& values, std::int64_t channels) {
  if (static_cast<std::int64_t>(values.size()) == channels) return values;
  if (values.size() == 1) return std::vector<double>(static_cast<std::size_t>(channels), values[0]);
  const double average = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  return std::vector<double>(static_cast<std::size_t>(channels), average);
}

// [1, C, 1, 1] on `device`, for the GPU's broadcast ops.
at::Tensor channel_tensor(const std::vector<float>& values, const at::Device& device) {
  return at::tensor(values).view({1, -1, 1, 1}).to(device);
}

}  // namespace

ParamSchema preset_schema(const PresetDefaults& d) {
  ParamSchema schema{
      int_param("size", d.size, "output side: the model's input is size x size")
          .at_least(1)
          .with_role(orchestrate::ParamRole::output_side),
      int_param("resize_size", d.resize_size,
                "eval: the shorter side is resized to this, then the center size x size is cut (ResNet: 256); "
                "0: resized straight to size x size")
          .at_least(0)
          .with_role(orchestrate::ParamRole::resize_side),
      real_param("central_fraction", d.central_fraction,
                 "eval: first keep this central fraction of each side (Inception: 0.875; 1: all)")
          .greater_than(0)
          .at_most(1),
      real_list_param("scale", d.scale,
                      "train: the random crop's area as a fraction of the image's, [min, max] (RandomResizedCrop)")
          .between(0, 1),
      real_list_param("ratio", std::vector<double>{3.0 / 4.0, 4.0 / 3.0},
                      "train: the random crop's aspect ratio (width / height), [min, max], drawn log-uniformly")
          .greater_than(0),
      bool_param("flip", true, "train: mirror left to right with probability 0.5"),
      real_param("brightness", d.jitter.brightness,
                 "train: brightness factor drawn from [1 - x, 1 + x] (ColorJitter); 0: off")
          .between(0, 1),
      real_param("contrast", d.jitter.contrast, "train: contrast factor drawn from [1 - x, 1 + x]; 0: off").between(0, 1),
      real_param("saturation", d.jitter.saturation, "train: saturation factor drawn from [1 - x, 1 + x]; 0: off")
          .between(0, 1),
      real_list_param("mean", d.mean,
                      "per channel, subtracted from the [0, 1] pixels (one value: every channel; grey data with three: "
                      "their average)"),
      real_list_param("std", d.std, "per channel, divided by after the mean").greater_than(0),
  };
  schema.rule([](const Params& p) -> std::string {
    for (const char* key : {"scale", "ratio"}) {
      const auto range = p.real_list(key);
      if (range.size() != 2 || range[0] > range[1]) return std::string(key) + ": give [min, max] with min <= max";
    }
    if (p.real_list("scale")[1] <= 0) return "scale: the largest area must be above 0";
    if (p.integer("resize_size") > 0 && p.integer("resize_size") < p.integer("size"))
      return "resize_size: at least size (" + std::to_string(p.integer("size")) + "), or 0";
    for (const char* key : {"mean", "std"}) {
      const auto n = p.real_list(key).size();
      if (n != 1 && n != 3) return std::string(key) + ": one value, or one per RGB channel";
    }
    return "";
  });
  return schema;
}

ImagePreset::ImagePreset(const Params& params, const PreprocessingContext& context, const std::string& name)
    : variant_(context.variant),
      channels_(context.data.channels),
      size_(params.integer("size")),
      resize_size_(params.integer("resize_size")),
      central_fraction_(params.real("central_fraction")),
      crop_{params.real_list("scale")[0], params.real_list("scale")[1], params.real_list("ratio")[0],
            params.real_list("ratio")[1]},
      flip_(params.boolean("flip")),
      jitter_{params.real("brightness"), params.real("contrast"), params.real("saturation")},
      mean_(per_channel(params.real_list("mean"), context.data.channels)),
      std_(per_channel(params.real_list("std"), context.data.channels)) {
  if (channels_ != 1 && channels_ != 3)
    throw RecipeError("[preprocessing] " + name + ": takes grey or RGB images, not " + std::to_string(channels_) +
                      " channels");
  for (std::size_t c = 0; c < mean_.size(); ++c) {
    scale_.push_back(static_cast<float>(1.0 / (255.0 * std_[c])));
    bias_.push_back(static_cast<float>(-mean_[c] / std_[c]));
  }
}

// Train: the random-resized crop's box is the window, so a JPEG decodes
// only the box, at the smallest DCT scale that keeps it at least size x size
// (it is resized to that anyway). Eval: the whole image, at the scale that
// keeps what eval_sample resizes to; decoding only the centre would change
// the resize's filter at the crop's edges, so the pixels would no longer be
// torchvision's (PresetParity).
DecodeWindow ImagePreset::decode_window(std::int64_t height, std::int64_t width, std::uint64_t seed) const {
  if (variant_ == PreprocessingVariant::train) {
    SampleRandom random(seed);
    const CropBox box = random_resized_crop_box(height, width, crop_, random);
    return {box.top, box.left, box.height, box.width, size_};
  }
  const double side = static_cast<double>(resize_size_ > 0 ? resize_size_ : size_);
  return whole_image(height, width, static_cast<std::int64_t>(std::ceil(side / central_fraction_)));
}

at::Tensor ImagePreset::prepare_sample(const at::Tensor& pixels, std::uint64_t seed) const {
  return variant_ == PreprocessingVariant::train ? train_sample(pixels, seed) : eval_sample(pixels);
}

at::Tensor ImagePreset::train_sample(const at::Tensor& window, std::uint64_t seed) const {
  // The flip and the jitter draw from a stream of their own: the box's
  // draws were made in decode_window, and the two must not be correlated.
  SampleRandom random = SampleRandom::stream(seed, 1);
  const auto image = resize_pixels(window, size_, size_);  // a windowed JPEG's pixels stay four bytes apart
  const bool mirror = flip_ && random.uniform(0, 1) < 0.5;
  if (jitter_.any()) return colour_jitter(packed_pixels(image, mirror), jitter_, random).contiguous();
  return packed_pixels(image, mirror);
}

at::Tensor ImagePreset::eval_sample(const at::Tensor& pixels) const {
  const auto central = central_fraction_crop(pixels, central_fraction_);
  const auto image = resize_size_ > 0 ? center_crop(resize_shorter_side(central, resize_size_), size_, size_)
                                      : resize_pixels(central, size_, size_);
  return packed_pixels(image);
}

at::Tensor ImagePreset::finish_batch(const at::Tensor& images) const {
  // torchvision's ToDtype(float32, scale=True) then Normalize, as
  // x * (1 / (255 std)) - mean / std, laid out NCHW afresh (a permuted view
  // of grey images would look channels-last), into a kept batch no one holds
  // any more, not fresh pages (BatchOutputPool).
  auto x = outputs_.take({images.size(0), images.size(3), images.size(1), images.size(2)},
                         images.options().dtype(at::kFloat));
  // On the CPU in one pass (normalize_planes.h). On a GPU the conversion,
  // then one in-place pass (addcmul into its own input); not at::mul_out on
  // the uint8 input, whose type promotion would first copy the whole batch
  // to a float temporary.
  if (images.device().is_cpu()) {
    normalize_into_planes(images.contiguous(), scale_, bias_, x);
    return x;
  }
  x.copy_(images.permute({0, 3, 1, 2}));
  const DeviceChannels& channels = on_device(images.device());
  return at::addcmul_out(x, channels.bias, x, channels.scale);
}

const ImagePreset::DeviceChannels& ImagePreset::on_device(const at::Device& device) const {
  const std::lock_guard<std::mutex> lock(on_device_mutex_);
  for (const DeviceChannels& kept : on_devices_)
    if (kept.device == device) return kept;
  on_devices_.push_back({device, channel_tensor(scale_, device), channel_tensor(bias_, device)});
  return on_devices_.back();
}

ServingTransform ImagePreset::serving_transform() const {
  return {central_fraction_, resize_size_, mean_, std_};
}

}  // namespace orchestrate::preprocessing
