// The train variant's crops, as the decoder is asked for them
// (decode_window), against torchvision's RandomResizedCrop on the same
// number of draws: the histograms of the crop's area fraction and of its
// aspect ratio agree bin by bin, so decoding only the window changes no
// sample distribution the preset promises.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "image_preset.h"
#include "orchestrate/registry.h"
#include "orchestrate/testing/plugin_under_test.h"
#include "orchestrate/testing/python_reference.h"

namespace {

using namespace orchestrate;

constexpr int kDraws = 20000;
constexpr int kBins = 10;
constexpr std::int64_t kHeight = 375, kWidth = 500;  // a typical ImageNet photo

struct Histograms {
  std::vector<double> area = std::vector<double>(kBins, 0.0);    // fraction of the image, bins over [0, 1]
  std::vector<double> aspect = std::vector<double>(kBins, 0.0);  // log(width / height), bins over log [3/4, 4/3]
  void add(std::int64_t height, std::int64_t width) {
    const double fraction = static_cast<double>(height * width) / static_cast<double>(kHeight * kWidth);
    const double low = std::log(3.0 / 4.0), high = std::log(4.0 / 3.0);
    const double aspect_at = (std::log(static_cast<double>(width) / static_cast<double>(height)) - low) / (high - low);
    area[bin(fraction)] += 1.0 / kDraws;
    aspect[bin(aspect_at)] += 1.0 / kDraws;
  }
  static std::size_t bin(double at) {
    return static_cast<std::size_t>(std::clamp(static_cast<int>(at * kBins), 0, kBins - 1));
  }
};

TEST(PresetCropDistribution, AreaAndAspectHistogramsMatchTorchvisionsRandomResizedCrop) {
  // torchvision draws (height, width) for the same image and ranges.
  const std::string sides = orchestrate::testing::run_python(R"(
import torch
from torchvision.transforms import RandomResizedCrop
torch.manual_seed(0)
image = torch.empty(3, )" + std::to_string(kHeight) + ", " + std::to_string(kWidth) + R"()
for _ in range()" + std::to_string(kDraws) + R"():
    top, left, h, w = RandomResizedCrop.get_params(image, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3))
    print(h, w)
)");
  Histograms torchvision, ours;
  std::istringstream lines(sides);
  std::int64_t h = 0, w = 0;
  int read = 0;
  while (lines >> h >> w) {
    torchvision.add(h, w);
    ++read;
  }
  ASSERT_EQ(read, kDraws);

  const auto& entry = orchestrate::testing::plugin_under_test().preprocessing().get("resnet");
  Params params;
  for (const auto& spec : entry.info.schema.specs()) params.set(spec.name, *spec.default_value);
  const auto preset = entry.create(params, PreprocessingContext{PreprocessingVariant::train, {3, 0, 0, 10, {}}});
  for (int seed = 0; seed < kDraws; ++seed) {
    const DecodeWindow window = preset->decode_window(kHeight, kWidth, static_cast<std::uint64_t>(seed));
    ASSERT_NO_THROW(check_window(window, kHeight, kWidth));
    EXPECT_EQ(window.min_side, 224) << "the crop is resized to 224 x 224: no smaller decode loses nothing";
    ours.add(window.height, window.width);
  }
  // Two samples of 20,000: a bin's share differs by about 0.003 (one
  // standard deviation at a share of 0.1); 0.015 is five of them.
  for (int b = 0; b < kBins; ++b) {
    EXPECT_NEAR(ours.area[b], torchvision.area[b], 0.015) << "area bin " << b;
    EXPECT_NEAR(ours.aspect[b], torchvision.aspect[b], 0.015) << "aspect bin " << b;
  }
}

}  // namespace
