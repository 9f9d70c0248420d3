// The preprocessing presets named after the model families they serve:
// resnet (torchvision's ImageNet recipe, also VGG's) and inception (TF-slim's
// and torchvision's Inception v3). See image_preset.h for what they do.
#include <memory>

#include "image_preset.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

using namespace orchestrate;
using orchestrate::preprocessing::ImagePreset;
using orchestrate::preprocessing::PresetDefaults;

void add_preset(Registry& registry, const std::string& name, const std::string& summary, const PresetDefaults& d) {
  registry.preprocessing().add(name, summary, orchestrate::preprocessing::preset_schema(d),
                               [name](const Params& params, const PreprocessingContext& context) {
                                 return std::make_unique<ImagePreset>(params, context, name);
                               });
}

void register_components(Registry& registry) {
  // ImageNet's per-channel statistics, as torchvision's ResNet and VGG weights expect.
  add_preset(registry, "resnet",
             "ResNet/VGG: train random-resized crop 224 + flip; eval resize 256, center crop 224; ImageNet mean/std",
             {224, 256, 1.0, {0.08, 1.0}, {}, {0.485, 0.456, 0.406}, {0.229, 0.224, 0.225}});
  // TF-slim's inception_preprocessing: crops down to 5 % of the area, colour
  // distortion, central 87.5 % at evaluation, pixels to [-1, 1].
  add_preset(registry, "inception",
             "Inception: train random-resized crop 299 + flip + colour jitter; eval central 87.5 %, resize 299; "
             "pixels to [-1, 1]",
             {299, 0, 0.875, {0.05, 1.0}, {0.125, 0.0, 0.5}, {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}});
}

}  // namespace

ORCHESTRATE_PLUGIN("preprocessing_presets", "1.0.0", register_components)
