// scripts/convert_dataset image_folder (Pillow's PNG writer) read by the
// image_folder dataset gives Fashion-MNIST's own pixels and labels.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "build_paths.h"
#include "orchestrate/dataset.h"
#include "orchestrate/testing/dataset_batches.h"
#include "orchestrate/testing/plugin_under_test.h"
#include "orchestrate/testing/python_reference.h"
#include "orchestrate/testing/scratch_dir.h"

namespace {

using orchestrate::DatasetSplit;
using orchestrate::testing::run_python;
using orchestrate::testing::ScratchDir;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(ConvertedFashionMnistFolder, EqualsTheIdxFilesExactly) {
  constexpr int kCount = 60;
  ScratchDir dir;
  const std::string out_dir = dir.file("converted");
  run_python(R"(
import runpy, sys
sys.argv = ["convert_dataset", "image_folder", "--out", ")" + out_dir + R"(", "--limit", ")" + std::to_string(kCount) + R"("]
runpy.run_path(")" + std::string(orchestrate::build_paths::kSourceDir) + R"(/scripts/convert_dataset", run_name="__main__")
)");
  run_python(R"(
import gzip
for split in ("train", "t10k"):
    images = gzip.open("/usr/share/datasets/fashion-mnist/%s-images-idx3-ubyte.gz" % split).read()[16:16 + )" +
             std::to_string(kCount) + R"( * 784]
    labels = gzip.open("/usr/share/datasets/fashion-mnist/%s-labels-idx1-ubyte.gz" % split).read()[8:8 + )" +
             std::to_string(kCount) + R"(]
    open(")" + dir.file("") + R"(" + split + ".bin", "wb").write(images + labels)
)");
  auto& entry = orchestrate::testing::plugin_under_test().datasets().get("image_folder");
  auto params = default_params(entry.info.schema);
  params.set("root", out_dir);
  params.set("channels", std::int64_t{1});
  params.set("height", std::int64_t{28});
  params.set("width", std::int64_t{28});
  for (const auto& [split, idx] : {std::pair{DatasetSplit::train, "train"}, std::pair{DatasetSplit::test, "t10k"}}) {
    SCOPED_TRACE(idx);
    const std::string bytes = read_bytes(dir.file(std::string(idx) + ".bin"));
    ASSERT_EQ(bytes.size(), kCount * 785u);
    // The folder lists class by class, each class's files (named by IDX
    // position, zero-padded) in IDX order.
    std::vector<int> order(kCount);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return bytes[kCount * 784 + a] < bytes[kCount * 784 + b]; });
    const auto dataset = entry.create(params, split);
    ASSERT_EQ(dataset->size(), kCount);
    EXPECT_EQ(dataset->info().class_names,
              (std::vector<std::string>{"0_T-shirt_top", "1_Trouser", "2_Pullover", "3_Dress", "4_Coat", "5_Sandal",
                                        "6_Shirt", "7_Sneaker", "8_Bag", "9_Ankle_boot"}));
    std::vector<std::int64_t> all(kCount);
    std::iota(all.begin(), all.end(), 0);
    const auto batch = orchestrate::testing::float_batch(*dataset, all);
    const auto pixels = (batch.images * 255).round().to(at::kByte).contiguous();
    for (int i = 0; i < kCount; ++i) {
      const int source = order[i];
      EXPECT_EQ(std::string(static_cast<const char*>(pixels[i].data_ptr()), 784), bytes.substr(source * 784, 784))
          << "example " << i << " (IDX " << source << ")";
      EXPECT_EQ(batch.labels[i].item<std::int64_t>(), bytes[kCount * 784 + source]) << i;
    }
  }
}

}  // namespace
