// Any IDX image/label pair (MNIST, Fashion-MNIST, KMNIST, EMNIST ...): 3-D
// unsigned-byte image files and 1-D label files, gzip-compressed or not,
// named by path. The whole split is kept in memory as uint8.
#include <ATen/ATen.h>

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
using orchestrate::IdxFile;
using orchestrate::Params;

std::string split_prefix(DatasetSplit split) { return split == DatasetSplit::train ? "train" : "test"; }

orchestrate::IdxSource source(const Params& params, const std::string& key) {
  return {params.string(key), "idx", "set [data] " + key + " to the path of the IDX file"};
}

struct Split {
  at::Tensor images;  // uint8 [N, rows, columns]
  at::Tensor labels;  // uint8 [N]
};

Split read_split(const Params& params, DatasetSplit split, std::int64_t limit) {
  const std::string prefix = split_prefix(split);
  IdxFile images(source(params, prefix + "_images"), 3, "image");
  IdxFile labels(source(params, prefix + "_labels"), 1, "label");
  if (images.count() != labels.count())
    throw DataError("[data] idx: " + params.string(prefix + "_images") + " holds " + std::to_string(images.count()) +
                    " images but " + params.string(prefix + "_labels") + " holds " + std::to_string(labels.count()) +
                    " labels; both files must come from the same split");
  return {images.read(limit, "pixels"), labels.read(limit, "labels")};
}

// As many classes as class_names, else the train split's largest label plus
// one, for both splits, so a test split that lacks the last class still
// agrees with the model.
std::int64_t count_classes(const Params& params, DatasetSplit split, const at::Tensor& labels) {
  if (const auto names = params.string_list("class_names"); !names.empty()) return static_cast<std::int64_t>(names.size());
  const at::Tensor train_labels =
      split == DatasetSplit::train ? labels : IdxFile(source(params, "train_labels"), 1, "label").read(0, "labels");
  const std::int64_t largest = train_labels.numel() == 0 ? 0 : train_labels.max().item<std::int64_t>();
  if (largest < 1)
    throw DataError("[data] idx: " + params.string("train_labels") + ": every label is 0, so there is one class; "
                    "set class_names");
  return largest + 1;
}

void check_labels(const Params& params, DatasetSplit split, const at::Tensor& labels, std::int64_t num_classes) {
  const auto* data = labels.data_ptr<std::uint8_t>();
  for (std::int64_t i = 0; i < labels.size(0); ++i)
    if (data[i] >= num_classes)
      throw DataError("[data] idx: " + params.string(split_prefix(split) + "_labels") + ": label " +
                      std::to_string(data[i]) + " of example " + std::to_string(i) + " is outside 0.." +
                      std::to_string(num_classes - 1) + " (class_names names " + std::to_string(num_classes) +
                      " classes); name every class, or check the file");
}

class IdxDataset final : public orchestrate::Dataset {
 public:
  IdxDataset(const Params& params, DatasetSplit split) : class_names_(params.string_list("class_names")) {
    auto data = read_split(params, split, params.integer("limit"));
    num_classes_ = count_classes(params, split, data.labels);
    check_labels(params, split, data.labels, num_classes_);
    images_ = std::move(data.images);
    labels_ = data.labels.to(at::kLong);
  }

  DatasetInfo info() const override { return {1, images_.size(1), images_.size(2), num_classes_, class_names_}; }

  std::int64_t size() const override { return images_.size(0); }

  Example example(const SampleRequest& request) const override {
    const std::int64_t index = request.index;
    if (index < 0 || index >= size())
      throw std::out_of_range("idx: index " + std::to_string(index) + " is outside [0, " + std::to_string(size()) +
                              ")");
    return {images_[index].unsqueeze(2), labels_.data_ptr<std::int64_t>()[index]};
  }

 private:
  std::vector<std::string> class_names_;
  std::int64_t num_classes_ = 0;
  at::Tensor images_;  // uint8 [N, rows, columns]; only read after construction
  at::Tensor labels_;  // int64 [N]
};

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      string_param("train_images", "", "the train split's IDX image file (3-D unsigned bytes; .gz or not)"),
      string_param("train_labels", "", "the train split's IDX label file (1-D unsigned bytes; .gz or not)"),
      string_param("test_images", "", "the test split's IDX image file"),
      string_param("test_labels", "", "the test split's IDX label file"),
      string_list_param("class_names", std::vector<std::string>{},
                        "names of classes 0, 1, ...; empty: as many classes as the train split's largest label "
                        "plus one, unnamed"),
      int_param("limit", 0, "keep only the first N examples of each split (0: all), for quick runs").at_least(0),
  };
  schema.rule([](const Params& p) -> std::string {
    for (const char* key : {"train_images", "train_labels", "test_images", "test_labels"})
      if (p.string(key).empty()) return std::string(key) + ": set the path of the IDX file";
    if (p.string_list("class_names").size() == 1) return "class_names: name at least two classes";
    return "";
  });
  registry.datasets().add(
      "idx", "any IDX image/label pair (MNIST, Fashion-MNIST ...): grey images at their stored size",
      std::move(schema), [](const Params& params, const orchestrate::DatasetContext& context) {
        return std::make_unique<IdxDataset>(params, context.split);
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("idx", "1.0.0", register_components)
