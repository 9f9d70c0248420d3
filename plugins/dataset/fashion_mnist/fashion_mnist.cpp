// Zalando's Fashion-MNIST: a preset over the IDX reader (idx_dataset.h) that
// fills in what the `idx` plugin asks for: the gzip-compressed files Zalando
// publishes and Debian's dataset-fashion-mnist installs (so no conversion
// step is needed), their directory and the ten class names. The whole split
// is kept in memory as uint8 (47 MB for train).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "orchestrate/dataset.h"
#include "orchestrate/dataset_support/idx_dataset.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

using orchestrate::DatasetSplit;
using orchestrate::Params;

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

orchestrate::IdxSource source(const std::string& dir, const std::string& file) {
  return {join_path(dir, file), "fashion_mnist",
          "install the Debian package dataset-fashion-mnist or set [data] dir to the directory holding the "
          "Fashion-MNIST .gz files"};
}

orchestrate::IdxDatasetSpec fashion_mnist(const Params& params, DatasetSplit split) {
  const std::string& dir = params.string("dir");
  const std::string prefix = split == DatasetSplit::train ? "train" : "t10k";
  orchestrate::IdxDatasetSpec spec;
  spec.dataset = "fashion_mnist";
  spec.images = source(dir, prefix + "-images-idx3-ubyte.gz");
  spec.labels = source(dir, prefix + "-labels-idx1-ubyte.gz");
  spec.train_labels = source(dir, "train-labels-idx1-ubyte.gz");
  spec.class_names = class_names();
  spec.limit = params.integer("limit");
  spec.classes = params.integer_list("classes");
  spec.side = 28;
  spec.wrong_side_fix = "Fashion-MNIST images are 28x28; point [data] dir at Fashion-MNIST";
  spec.count_fix = "both files must come from the same Fashion-MNIST split";
  spec.label_fix = "; the file is corrupt, reinstall or download it again";
  return spec;
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      string_param("dir", "/usr/share/datasets/fashion-mnist",
                   "directory holding train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, "
                   "t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz (Debian: apt-get install "
                   "dataset-fashion-mnist)")
          .existing_directory(),
      int_param("limit", 0, "keep only the first N examples of each split (0: all), for quick runs").at_least(0),
      int_list_param("classes", std::vector<std::int64_t>{},
                     "keep only these classes (0-9), relabelled 0, 1, ... in this order; empty: all ten")
          .between(0, kNumClasses - 1)
          .with_role(orchestrate::ParamRole::class_list),
  };
  schema.rule([](const Params& p) -> std::string {
    auto classes = p.integer_list("classes");
    std::sort(classes.begin(), classes.end());
    if (std::adjacent_find(classes.begin(), classes.end()) != classes.end()) return "classes: a class is listed twice";
    if (classes.size() == 1) return "classes: keep at least two classes";
    return "";
  });
  registry.datasets().add(
      "fashion_mnist", "Zalando's Fashion-MNIST: 28x28 grey clothing images, 10 classes (a preset of idx)",
      std::move(schema), [](const Params& params, const orchestrate::DatasetContext& context) {
        return orchestrate::make_idx_dataset(fashion_mnist(params, context.split), context.split);
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("fashion_mnist", "1.1.0", register_components)
