// The resnet and inception presets: the eval variants against
// torchvision.transforms.v2 on real images (Fashion-MNIST photos from
// Debian's dataset-fashion-mnist, enlarged to photo sizes, RGB from three of
// them), the train variants' determinism and crop ranges.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "image_preset.h"
#include "orchestrate/presets/random_resized_crop.h"
#include "orchestrate/registry.h"
#include "orchestrate/testing/plugin_under_test.h"
#include "orchestrate/testing/python_reference.h"
#include "orchestrate/testing/scratch_dir.h"

namespace {

using namespace orchestrate;
using orchestrate::preprocessing::CropRanges;
using orchestrate::preprocessing::SampleRandom;

std::unique_ptr<Preprocessing> make(const std::string& name, PreprocessingVariant variant, std::int64_t channels,
                                    const std::function<void(Params&)>& customize = {}) {
  const auto& entry = orchestrate::testing::plugin_under_test().preprocessing().get(name);
  Params params;
  for (const auto& spec : entry.info.schema.specs()) params.set(spec.name, *spec.default_value);
  if (customize) customize(params);
  return entry.create(params, PreprocessingContext{variant, {channels, 0, 0, 10, {}}});
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

at::Tensor tensor_from_file(const std::string& path, at::IntArrayRef sizes, at::ScalarType type) {
  const std::string bytes = read_bytes(path);
  auto out = at::empty(sizes, type);
  EXPECT_EQ(bytes.size(), static_cast<std::size_t>(out.nbytes())) << path;
  std::memcpy(out.data_ptr(), bytes.data(), std::min<std::size_t>(bytes.size(), out.nbytes()));
  return out;
}

struct ReferenceImage {
  std::int64_t height, width, channels;
};

const std::vector<ReferenceImage> kImages{{375, 500, 3}, {500, 333, 3}, {231, 240, 3}, {224, 224, 3}, {299, 450, 3},
                                          {300, 200, 1}};

TEST(PresetParity, EvalVariantsEqualTorchvisionOnRealImages) {
  orchestrate::testing::ScratchDir dir;
  std::string sizes;
  for (const auto& image : kImages)
    sizes += "(" + std::to_string(image.height) + ", " + std::to_string(image.width) + ", " +
             std::to_string(image.channels) + "), ";
  // The inception reference spells out tf.image.central_crop's box with
  // CenterCrop, then Resize to 299 x 299.
  orchestrate::testing::run_python(R"(
import gzip, numpy as np, torch
from PIL import Image
from torchvision.transforms import v2
raw = gzip.open("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz").read()
photos = np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 28, 28)
out = ")" + dir.path().string() + R"("
imagenet = ([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
for n, (h, w, c) in enumerate([)" + sizes + R"(]):
    planes = [np.asarray(Image.fromarray(photos[3 * n + k]).resize((w, h), Image.BICUBIC)) for k in range(c)]
    pixels = np.ascontiguousarray(np.stack(planes, axis=2))
    pixels.tofile(f"{out}/{n}.u8")
    image = torch.from_numpy(pixels).permute(2, 0, 1)
    mean, std = imagenet if c == 3 else ([sum(imagenet[0]) / 3], [sum(imagenet[1]) / 3])
    resnet = v2.Compose([v2.Resize(256, antialias=True), v2.CenterCrop(224), v2.ToDtype(torch.float32, scale=True),
                         v2.Normalize(mean, std)])
    resnet(image).numpy().tofile(f"{out}/{n}.resnet.f32")
    top, left = int((h - h * 0.875) / 2), int((w - w * 0.875) / 2)
    inception = v2.Compose([v2.CenterCrop((h - 2 * top, w - 2 * left)), v2.Resize((299, 299), antialias=True),
                            v2.ToDtype(torch.float32, scale=True), v2.Normalize([0.5] * c, [0.5] * c)])
    inception(image).numpy().tofile(f"{out}/{n}.inception.f32")
)");
  for (std::size_t n = 0; n < kImages.size(); ++n) {
    const auto& image = kImages[n];
    SCOPED_TRACE(std::to_string(image.height) + "x" + std::to_string(image.width) + "x" + std::to_string(image.channels));
    const auto pixels =
        tensor_from_file(dir.file(std::to_string(n) + ".u8"), {image.height, image.width, image.channels}, at::kByte);
    for (const auto& [name, side] : std::vector<std::pair<std::string, std::int64_t>>{{"resnet", 224}, {"inception", 299}}) {
      SCOPED_TRACE(name);
      const auto preset = make(name, PreprocessingVariant::eval, image.channels);
      const auto ours = preset->finish_batch(preset->prepare_sample(pixels, 0).unsqueeze(0))[0];
      const auto reference = tensor_from_file(dir.file(std::to_string(n) + "." + name + ".f32"),
                                              {image.channels, side, side}, at::kFloat);
      ASSERT_EQ(ours.sizes(), reference.sizes());
      const double difference = (ours - reference).abs().max().item<double>();
      EXPECT_LE(difference, 1e-5) << "max difference " << difference;
    }
  }
}

std::vector<at::Tensor> train_samples(const Preprocessing& preset, const at::Tensor& pixels, int count, int threads) {
  std::vector<at::Tensor> out(static_cast<std::size_t>(count));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (int i = t; i < count; i += threads) out[static_cast<std::size_t>(i)] = prepare_whole_image(preset, pixels, 1000 + i);
    });
  for (auto& worker : workers) worker.join();
  return out;
}

TEST(PresetTrainVariant, TheSameSeedGivesTheSamePixelsOnOneOrFourThreads) {
  const auto pixels = at::randint(0, 256, {180, 240, 3}, at::kByte);
  for (const char* name : {"resnet", "inception"}) {  // inception jitters colours too
    SCOPED_TRACE(name);
    const auto preset = make(name, PreprocessingVariant::train, 3);
    const auto alone = train_samples(*preset, pixels, 32, 1);
    const auto together = train_samples(*preset, pixels, 32, 4);
    std::set<std::string> distinct;
    for (std::size_t i = 0; i < alone.size(); ++i) {
      EXPECT_TRUE(alone[i].equal(together[i])) << "seed " << 1000 + i;
      distinct.insert(std::string(static_cast<const char*>(alone[i].data_ptr()), alone[i].nbytes()));
    }
    EXPECT_EQ(distinct.size(), alone.size()) << "different seeds gave the same crop";
  }
}

TEST(PresetTrainVariant, CropsFallInTheConfiguredAreaAndRatioRanges) {
  const CropRanges ranges{0.2, 0.6, 0.5, 1.5};
  const std::int64_t height = 375, width = 500;
  double area_sum = 0, smallest = 1, largest = 0;
  const int draws = 4000;
  for (int seed = 0; seed < draws; ++seed) {
    SampleRandom random(static_cast<std::uint64_t>(seed));
    const auto box = orchestrate::preprocessing::random_resized_crop_box(height, width, ranges, random);
    ASSERT_GE(box.top, 0);
    ASSERT_GE(box.left, 0);
    ASSERT_LE(box.top + box.height, height);
    ASSERT_LE(box.left + box.width, width);
    // Sides are rounded to whole pixels: allow half a pixel on each.
    const double area = static_cast<double>(box.height * box.width) / (height * width);
    const double slack = (box.height + box.width) * 0.5 / (height * width) * 2;
    EXPECT_GE(area, ranges.min_scale - slack);
    EXPECT_LE(area, ranges.max_scale + slack);
    const double ratio = static_cast<double>(box.width) / static_cast<double>(box.height);
    EXPECT_GE(ratio, ranges.min_ratio * (1 - 1.0 / box.height) - 1e-9);
    EXPECT_LE(ratio, ranges.max_ratio * (1 + 1.0 / box.height) + 1e-9);
    area_sum += area;
    smallest = std::min(smallest, area);
    largest = std::max(largest, area);
  }
  // Drawn uniformly over [0.2, 0.6], less the tall or wide boxes that do not
  // fit and are drawn again (which favours small areas a little, as in torchvision).
  EXPECT_NEAR(area_sum / draws, 0.39, 0.015);
  EXPECT_LT(smallest, 0.21);
  EXPECT_GT(largest, 0.58);
}

TEST(PresetTrainVariant, OutputIsTheConfiguredSizeWhateverTheInput) {
  const auto preset = make("resnet", PreprocessingVariant::train, 1, [](Params& p) { p.set("size", std::int64_t{64}); });
  for (const auto& sides : std::vector<std::pair<int, int>>{{20, 300}, {300, 20}, {64, 64}, {1000, 700}}) {
    const auto sample = prepare_whole_image(*preset, at::randint(0, 256, {sides.first, sides.second, 1}, at::kByte), 7);
    EXPECT_EQ(sample.sizes(), (at::IntArrayRef{64, 64, 1}));
  }
}

// finish_batch is torchvision's ToDtype(scale=True) + Normalize, and a
// batch finished into memory reused from an earlier batch (BatchOutputPool)
// has exactly the values of one finished into fresh memory.
TEST(PresetFinishBatch, IsToDtypeAndNormalizeAlsoInReusedMemory) {
  const auto preset = make("resnet", PreprocessingVariant::train, 3);
  const auto mean = at::tensor({0.485f, 0.456f, 0.406f}).view({1, 3, 1, 1});
  const auto std = at::tensor({0.229f, 0.224f, 0.225f}).view({1, 3, 1, 1});
  const void* first_memory = nullptr;
  for (int batch = 0; batch < 3; ++batch) {
    const auto images = at::randint(0, 256, {4, 224, 224, 3}, at::kByte);
    const auto finished = preset->finish_batch(images);
    const auto expected = (images.permute({0, 3, 1, 2}).to(at::kFloat) / 255 - mean) / std;
    ASSERT_EQ(finished.sizes(), (at::IntArrayRef{4, 3, 224, 224}));
    EXPECT_TRUE(finished.is_contiguous());
    EXPECT_LT((finished - expected).abs().max().item<float>(), 1e-5) << "batch " << batch;
    if (batch == 0) first_memory = finished.data_ptr();
    if (batch == 2) EXPECT_EQ(finished.data_ptr(), first_memory) << "the first batch's memory was not reused";
  }
}

// On the CPU finish_batch is one hand-written pass (normalize_planes.h);
// its numbers are exactly those of the ATen ops the GPU runs (the
// conversion, then addcmul), grey and RGB, at sizes that are not a multiple
// of any vector width.
TEST(PresetFinishBatch, TheCpuPassGivesTheGpuOpsNumbersBitForBit) {
  for (const std::int64_t channels : {1, 3}) {
    const auto preset = make("resnet", PreprocessingVariant::train, channels);
    const auto images = at::randint(0, 256, {3, 13, 7, channels}, at::kByte);
    std::vector<float> scale, bias;
    const std::vector<double> mean{0.485, 0.456, 0.406}, std{0.229, 0.224, 0.225};
    for (std::int64_t c = 0; c < channels; ++c) {
      const double m = channels == 3 ? mean[c] : (mean[0] + mean[1] + mean[2]) / 3;
      const double s = channels == 3 ? std[c] : (std[0] + std[1] + std[2]) / 3;
      scale.push_back(static_cast<float>(1.0 / (255.0 * s)));
      bias.push_back(static_cast<float>(-m / s));
    }
    auto expected = at::empty({3, channels, 13, 7}, at::kFloat);
    expected.copy_(images.permute({0, 3, 1, 2}));
    expected = at::addcmul(at::tensor(bias).view({1, -1, 1, 1}), expected, at::tensor(scale).view({1, -1, 1, 1}));
    EXPECT_TRUE(at::equal(preset->finish_batch(images), expected)) << channels << " channels";
  }
}

TEST(PresetServing, TheExportedTransformIsTheEvalVariants) {
  const auto resnet = make("resnet", PreprocessingVariant::eval, 3)->serving_transform();
  EXPECT_EQ(resnet.resize_shorter, 256);
  EXPECT_EQ(resnet.central_fraction, 1.0);
  EXPECT_EQ(resnet.mean, (std::vector<double>{0.485, 0.456, 0.406}));
  const auto inception = make("inception", PreprocessingVariant::eval, 3)->serving_transform();
  EXPECT_EQ(inception.resize_shorter, 0);
  EXPECT_EQ(inception.central_fraction, 0.875);
  EXPECT_EQ(inception.std, (std::vector<double>{0.5, 0.5, 0.5}));
}

}  // namespace
