// The dataset contract: both splits build from the settings, examples match the
// declared info, are the same every time and from every thread.
// Part of share/doc/design.md's promise that each kind has a conformance test
// every plugin of that kind passes; run on the components conformance_plugins.h
// selected (`orchestrate conformance`).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "orchestrate/dataset.h"

#include "conformance/conformance_plugins.h"

namespace {

using orchestrate::ComponentKind;
using namespace orchestrate::conformance;  // registry(), selected_names(), params_for(), ...

class DatasetConformance : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DatasetConformance);

orchestrate::SampleRequest request_for(std::int64_t index) {
  orchestrate::SampleRequest request;
  request.index = index;
  request.seed = static_cast<std::uint64_t>(index) * 7919;
  return request;
}

void expect_examples_equal(const orchestrate::Example& a, const orchestrate::Example& b) {
  EXPECT_TRUE(a.pixels.equal(b.pixels));
  EXPECT_EQ(a.label, b.label);
}

TEST_P(DatasetConformance, DefaultsBuildBothSplitsWhoseExamplesMatchInfo) {
  const auto& entry = registry().datasets().get(GetParam());
  const auto params = params_for(ComponentKind::dataset, GetParam());
  for (const auto split : {orchestrate::DatasetSplit::train, orchestrate::DatasetSplit::test}) {
    SCOPED_TRACE(orchestrate::to_string(split));
    const auto dataset = entry.create(params, orchestrate::DatasetContext{split, nullptr, &registry()});
    ASSERT_NE(dataset, nullptr);
    const std::int64_t size = dataset->size();
    ASSERT_GT(size, 0);
    const auto info = dataset->info();
    ASSERT_TRUE(info.channels == 1 || info.channels == 3) << info.channels;
    ASSERT_GE(info.height, 0);
    ASSERT_EQ(info.height == 0, info.width == 0) << "a fixed size has both sides";
    ASSERT_GE(info.num_classes, 2);
    if (!info.class_names.empty()) EXPECT_EQ(info.class_names.size(), static_cast<std::size_t>(info.num_classes));

    for (const std::int64_t index : {std::int64_t{0}, size - 1, size / 2}) {
      SCOPED_TRACE(index);
      const auto example = dataset->example(request_for(index));
      ASSERT_EQ(example.pixels.scalar_type(), at::kByte);
      ASSERT_EQ(example.pixels.dim(), 3);
      EXPECT_TRUE(example.pixels.is_contiguous());
      EXPECT_EQ(example.pixels.size(2), info.channels);
      if (info.height > 0) {
        EXPECT_EQ(example.pixels.size(0), info.height);
        EXPECT_EQ(example.pixels.size(1), info.width);
      }
      EXPECT_GE(example.label, 0);
      EXPECT_LT(example.label, info.num_classes);
      expect_examples_equal(dataset->example(request_for(index)), example);  // the same every time
      // ... and in every epoch, whatever the seed: the pipeline's cache ([run] cache_mb) keeps it.
      auto later = request_for(index);
      later.epoch = 3;
      later.seed = 0x5eedULL;
      expect_examples_equal(dataset->example(later), example);
      // A decode window (SampleRequest::window): a dataset that honours it
      // returns exactly that region and says so; one that ignores it, the
      // whole image, unmarked (the host then cuts the window out).
      const std::int64_t height = example.pixels.size(0), width = example.pixels.size(1);
      const orchestrate::DecodeWindow window{height / 4, width / 3, std::max<std::int64_t>(1, height / 2),
                                             std::max<std::int64_t>(1, width / 2), 0};
      auto windowed = request_for(index);
      windowed.window = [&](std::int64_t h, std::int64_t w) {
        EXPECT_EQ(h, height);
        EXPECT_EQ(w, width);
        return window;
      };
      const auto part = dataset->example(windowed);
      const auto expected = part.windowed ? example.pixels.narrow(0, window.top, window.height)
                                                .narrow(1, window.left, window.width)
                                          : example.pixels;
      ASSERT_EQ(part.pixels.sizes(), expected.sizes()) << (part.windowed ? "windowed" : "whole");
      EXPECT_TRUE(part.pixels.equal(expected)) << (part.windowed ? "windowed" : "whole");
      EXPECT_EQ(part.label, example.label);
    }
    EXPECT_THROW(dataset->example(request_for(size)), std::out_of_range);
    EXPECT_THROW(dataset->example(request_for(-1)), std::out_of_range);
  }
}

TEST_P(DatasetConformance, ConcurrentExamplesMatchSerialOnes) {
  const auto& entry = registry().datasets().get(GetParam());
  const auto dataset = entry.create(params_for(ComponentKind::dataset, GetParam()),
                                    orchestrate::DatasetContext{orchestrate::DatasetSplit::train, nullptr, &registry()});
  const std::int64_t count = std::min<std::int64_t>(dataset->size(), 16);
  std::vector<orchestrate::Example> expected;
  for (std::int64_t i = 0; i < count; ++i) expected.push_back(dataset->example(request_for(i)));
  std::vector<std::vector<orchestrate::Example>> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results)
    threads.emplace_back([&] {
      for (std::int64_t i = 0; i < count; ++i) result.push_back(dataset->example(request_for(i)));
    });
  for (auto& thread : threads) thread.join();
  for (const auto& result : results)
    for (std::int64_t i = 0; i < count; ++i) expect_examples_equal(result[i], expected[i]);
}

INSTANTIATE_TEST_SUITE_P(All, DatasetConformance, testing::ValuesIn(selected_names(ComponentKind::dataset)),
                         name_of_param);

}  // namespace
