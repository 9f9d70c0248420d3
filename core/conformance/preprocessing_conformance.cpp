// The preprocessing contract.
// Part of share/doc/design.md's promise that each kind has a conformance test
// every plugin of that kind passes; run on the components conformance_plugins.h
// selected (`orchestrate conformance`).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "orchestrate/preprocessing.h"

#include "conformance/conformance_plugins.h"

namespace {

using orchestrate::ComponentKind;
using namespace orchestrate::conformance;  // registry(), selected_names(), params_for(), ...

class PreprocessingConformance : public testing::TestWithParam<std::string> {};

// decode_window's contract, as a decoder uses it: for any seed the window
// lies inside the image, and its pixels at the smallest scale its min_side
// allows (a JPEG decoder may give no more) still make a sample of the
// declared shape.
void expect_windows_serve(const orchestrate::Preprocessing& preprocessing, const at::Tensor& image,
                          const orchestrate::ImageShape& shape) {
  for (std::uint64_t seed = 0; seed < 16; ++seed) {
    const auto window = preprocessing.decode_window(image.size(0), image.size(1), seed);
    ASSERT_NO_THROW(orchestrate::check_window(window, image.size(0), image.size(1))) << "seed " << seed;
    auto pixels = image.narrow(0, window.top, window.height).narrow(1, window.left, window.width);
    if (window.min_side > 0) {
      const double scale = std::min(1.0, static_cast<double>(window.min_side) /
                                             static_cast<double>(std::min(window.height, window.width)));
      const auto height = static_cast<std::int64_t>(std::ceil(static_cast<double>(window.height) * scale));
      const auto width = static_cast<std::int64_t>(std::ceil(static_cast<double>(window.width) * scale));
      pixels = at::upsample_nearest2d(pixels.permute({2, 0, 1}).unsqueeze(0), {height, width})[0].permute({1, 2, 0});
    }
    const auto sample = preprocessing.prepare_sample(pixels.contiguous(), seed);
    ASSERT_EQ(sample.sizes(), (at::IntArrayRef{shape.height, shape.width, shape.channels})) << "seed " << seed;
    if (pixels.size(2) == 3) {  // as a windowed JPEG comes: RGB four bytes apart
      auto four = at::full({pixels.size(0), pixels.size(1), 4}, 255, at::kByte);
      four.narrow(2, 0, 3).copy_(pixels);
      EXPECT_TRUE(preprocessing.prepare_sample(four.narrow(2, 0, 3), seed).equal(sample))
          << "RGB pixels four bytes apart gave other pixels than the same pixels contiguous; seed " << seed;
    }
  }
}
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PreprocessingConformance);

// preprocessing.h's contract, for both variants, on grey and RGB data: the
// prepared sample has the declared shape, is uint8 and depends only on the
// seed (not on the thread); the eval variant ignores the seed; finish_batch
// makes float32 NCHW, also called from several threads at once; both variants give the model one shape; every decode
// window lies inside the image and its pixels, at any scale it allows, make
// a sample of that shape.
TEST_P(PreprocessingConformance, PreparesDeclaredShapesFromTheSeedAlone) {
  const auto& entry = registry().preprocessing().get(GetParam());
  const auto params = params_for(ComponentKind::preprocessing, GetParam());
  for (const std::int64_t channels : {1, 3}) {
    SCOPED_TRACE(channels);
    // A fixed-size split, so a preprocessing that does not resize can serve it too.
    const orchestrate::DatasetInfo data{channels, 60, 44, 10, {}};
    const auto image = at::randint(0, 256, {60, 44, channels}, at::kByte);
    std::vector<orchestrate::ImageShape> shapes;
    for (const auto variant : {orchestrate::PreprocessingVariant::train, orchestrate::PreprocessingVariant::eval}) {
      SCOPED_TRACE(orchestrate::to_string(variant));
      const auto preprocessing = entry.create(params, orchestrate::PreprocessingContext{variant, data});
      ASSERT_TRUE(preprocessing) << "the factory returned no preprocessing";
      const auto shape = preprocessing->output_shape();
      shapes.push_back(shape);
      ASSERT_EQ(shape.channels, channels);
      // As the host does for a dataset that decodes whole images.
      const auto sample = orchestrate::prepare_whole_image(*preprocessing, image, 12345);
      ASSERT_EQ(sample.scalar_type(), at::kByte);
      ASSERT_EQ(sample.sizes(), (at::IntArrayRef{shape.height, shape.width, channels}));
      EXPECT_TRUE(sample.is_contiguous());
      std::vector<at::Tensor> from_threads(4);
      std::vector<std::thread> threads;
      for (auto& result : from_threads)
        threads.emplace_back([&] { result = orchestrate::prepare_whole_image(*preprocessing, image, 12345); });
      for (auto& thread : threads) thread.join();
      for (const auto& result : from_threads) EXPECT_TRUE(result.equal(sample)) << "the same seed, other pixels";
      if (variant == orchestrate::PreprocessingVariant::eval)
        EXPECT_TRUE(orchestrate::prepare_whole_image(*preprocessing, image, 999).equal(sample))
            << "the eval variant used the seed";
      expect_windows_serve(*preprocessing, image, shape);
      const auto batch = preprocessing->finish_batch(at::stack({sample, sample}));
      ASSERT_EQ(batch.scalar_type(), at::kFloat);
      ASSERT_EQ(batch.sizes(), (at::IntArrayRef{2, channels, shape.height, shape.width}));
      // Plain NCHW strides even for one channel, where a permuted view would
      // look channels-last and send convolutions down another kernel path.
      EXPECT_EQ(batch.stride(1), shape.height * shape.width);
      EXPECT_EQ(batch.stride(0), channels * shape.height * shape.width);
      EXPECT_TRUE(batch.isfinite().all().item<bool>());
      // For CPU training each pipeline thread finishes the batches it
      // completes: concurrent calls, each holding its result, must give the
      // values of one call alone.
      std::vector<at::Tensor> finished(4);
      std::vector<std::thread> finishers;
      const auto batch_input = at::stack({sample, sample});
      for (auto& result : finished)
        finishers.emplace_back([&] {
          for (int i = 0; i < 20; ++i) result = preprocessing->finish_batch(batch_input);
        });
      for (auto& thread : finishers) thread.join();
      for (const auto& result : finished) EXPECT_TRUE(result.equal(batch)) << "finish_batch on several threads at once";
      const auto transform = preprocessing->serving_transform();
      EXPECT_GT(transform.central_fraction, 0.0);
      EXPECT_LE(transform.central_fraction, 1.0);
      EXPECT_TRUE(transform.mean.size() == 1 || static_cast<std::int64_t>(transform.mean.size()) == channels);
      EXPECT_EQ(transform.mean.size(), transform.std.size());
    }
    EXPECT_EQ(shapes[0].height, shapes[1].height);
    EXPECT_EQ(shapes[0].width, shapes[1].width);
  }
}

INSTANTIATE_TEST_SUITE_P(All, PreprocessingConformance,
                         testing::ValuesIn(selected_names(ComponentKind::preprocessing)), name_of_param);

}  // namespace
