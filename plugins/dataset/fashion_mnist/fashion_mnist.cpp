// Fashion-MNIST read straight from the gzip-compressed IDX files that Zalando
// publishes and Debian's dataset-fashion-mnist installs, so no conversion step
// is needed. The whole split is kept in memory as uint8 (47 MB for train).
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "idx_file.h"
#include "orchestrate/dataset.h"
#include "orchestrate/error.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

using orchestrate::Example;
using orchestrate::SampleRequest;
using orchestrate::DataError;
using orchestrate::DatasetInfo;
using orchestrate::DatasetSplit;
using orchestrate::Params;

constexpr std::int64_t kImageSide = 28;
constexpr std::int64_t kNumClasses = 10;

const std::vector<std::string>& class_names() {
  static const std::vector<std::string> names{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                              "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

// Paths are plain strings: std::filesystem is avoided because the LibTorch
// wheel exports its own, partly broken, copy of it (pytorch/pytorch#133437).
std::string join_path(const std::string& dir, const std::string& file) {
  return dir.empty() || dir.back() == '/' ? dir + file : dir + "/" + file;
}

orchestrate::IdxSource source(const std::string& path) {
  return {path, "fashion_mnist",
          "install the Debian package dataset-fashion-mnist or set [data] dir to the directory holding the "
          "Fashion-MNIST .gz files"};
}

struct ImageFile {
  std::uint32_t declared_count;
  at::Tensor pixels;  // uint8 [N, 28, 28]
};

ImageFile read_images(const std::string& path, std::int64_t limit) {
  orchestrate::IdxFile file(source(path), 3, "image");
  const auto sides = file.item_shape();
  if (sides[0] != kImageSide || sides[1] != kImageSide)
    file.fail("holds " + std::to_string(sides[0]) + "x" + std::to_string(sides[1]) +
              " images, but Fashion-MNIST images are 28x28; point [data] dir at Fashion-MNIST");
  return {file.count(), file.read(limit, "pixels")};
}

struct LabelFile {
  std::uint32_t declared_count;
  at::Tensor labels;  // int64 [N]
};

LabelFile read_labels(const std::string& path, std::int64_t limit) {
  orchestrate::IdxFile file(source(path), 1, "label");
  const auto raw = file.read(limit, "labels");
  const auto* raw_data = raw.data_ptr<std::uint8_t>();
  for (std::int64_t i = 0; i < raw.size(0); ++i)
    if (raw_data[i] >= kNumClasses)
      file.fail("label " + std::to_string(raw_data[i]) + " of example " + std::to_string(i) +
                " is outside 0..9; the file is corrupt, reinstall or download it again");
  return {file.count(), raw.to(at::kLong)};
}

class FashionMnistDataset final : public orchestrate::Dataset {
 public:
  FashionMnistDataset(const Params& params, DatasetSplit split) {
    const std::string& dir = params.string("dir");
    const std::string prefix = split == DatasetSplit::train ? "train" : "t10k";
    const std::string image_path = join_path(dir, prefix + "-images-idx3-ubyte.gz");
    const std::string label_path = join_path(dir, prefix + "-labels-idx1-ubyte.gz");
    const std::int64_t limit = params.integer("limit");
    auto images = read_images(image_path, limit);
    auto labels = read_labels(label_path, limit);
    if (images.declared_count != labels.declared_count)
      throw DataError("[data] fashion_mnist: " + image_path + " holds " + std::to_string(images.declared_count) +
                      " images but " + label_path + " holds " + std::to_string(labels.declared_count) +
                      " labels; both files must come from the same Fashion-MNIST split");
    images_ = std::move(images.pixels);
    labels_ = std::move(labels.labels);
    keep_classes(params.integer_list("classes"));
  }

  DatasetInfo info() const override { return {1, kImageSide, kImageSide, num_classes(), names_}; }

  std::int64_t size() const override { return images_.size(0); }

  Example example(const SampleRequest& request) const override {
    const std::int64_t index = request.index;
    if (index < 0 || index >= size())
      throw std::out_of_range("fashion_mnist: index " + std::to_string(index) + " is outside [0, " +
                              std::to_string(size()) + ")");
    // A view of the kept pixels: [28, 28] with its one grey channel last.
    return {images_[index].unsqueeze(2), labels_.data_ptr<std::int64_t>()[index]};
  }

 private:
  // Keeps only the examples of `classes`, relabelled 0, 1, ... in the order
  // given: a different class set for transfer learning from the same files.
  void keep_classes(const std::vector<std::int64_t>& classes) {
    names_ = class_names();
    if (classes.empty()) return;
    auto relabel = at::full({kNumClasses}, -1, at::kLong);
    names_.clear();
    for (std::size_t i = 0; i < classes.size(); ++i) {
      relabel[classes[i]] = static_cast<std::int64_t>(i);
      names_.push_back(class_names()[static_cast<std::size_t>(classes[i])]);
    }
    const auto new_labels = relabel.index_select(0, labels_);
    const auto kept = new_labels.ge(0).nonzero().squeeze(1);
    images_ = images_.index_select(0, kept);
    labels_ = new_labels.index_select(0, kept);
  }

  std::int64_t num_classes() const { return static_cast<std::int64_t>(names_.size()); }

  at::Tensor images_;  // uint8 [N, 28, 28]; only read after construction
  at::Tensor labels_;  // int64 [N], contiguous
  std::vector<std::string> names_;
};

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      string_param("dir", "/usr/share/datasets/fashion-mnist",
                   "directory holding train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, "
                   "t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz"),
      int_param("limit", 0, "keep only the first N examples of each split (0: all), for quick runs").at_least(0),
      int_list_param("classes", std::vector<std::int64_t>{},
                     "keep only these classes (0-9), relabelled 0, 1, ... in this order; empty: all ten")
          .between(0, kNumClasses - 1),
  };
  schema.rule([](const Params& p) -> std::string {
    auto classes = p.integer_list("classes");
    std::sort(classes.begin(), classes.end());
    if (std::adjacent_find(classes.begin(), classes.end()) != classes.end()) return "classes: a class is listed twice";
    if (classes.size() == 1) return "classes: keep at least two classes";
    return "";
  });
  registry.datasets().add(
      "fashion_mnist", "Zalando's Fashion-MNIST: 28x28 grey clothing images, 10 classes", std::move(schema),
      [](const Params& params, const orchestrate::DatasetContext& context) {
        return std::make_unique<FashionMnistDataset>(params, context.split);
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("fashion_mnist", "1.0.0", register_components)
