// Any IDX image/label pair (MNIST, Fashion-MNIST, KMNIST, EMNIST ...): 3-D
// unsigned-byte image files and 1-D label files, gzip-compressed or not,
// named by path, read by the IDX reader `fashion_mnist` is a preset of
// (idx_dataset.h). The whole split is kept in memory as uint8.
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

std::string split_prefix(DatasetSplit split) { return split == DatasetSplit::train ? "train" : "test"; }

orchestrate::IdxSource source(const Params& params, const std::string& key) {
  return {params.string(key), "idx", "set [data] " + key + " to the path of the IDX file"};
}

orchestrate::IdxDatasetSpec idx(const Params& params, DatasetSplit split) {
  const std::string prefix = split_prefix(split);
  orchestrate::IdxDatasetSpec spec;
  spec.dataset = "idx";
  spec.images = source(params, prefix + "_images");
  spec.labels = source(params, prefix + "_labels");
  spec.train_labels = source(params, "train_labels");
  spec.class_names = params.string_list("class_names");
  spec.limit = params.integer("limit");
  spec.count_fix = "both files must come from the same split";
  spec.label_fix = spec.class_names.empty()
                       ? " (as many classes as the train split's largest label plus one); name every class in "
                         "class_names, or check the file"
                       : " (class_names names " + std::to_string(spec.class_names.size()) +
                             " classes); name every class, or check the file";
  return spec;
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      string_param("train_images", "", "the train split's IDX image file (3-D unsigned bytes; .gz or not)").existing_file(),
      string_param("train_labels", "", "the train split's IDX label file (1-D unsigned bytes; .gz or not)").existing_file(),
      string_param("test_images", "", "the test split's IDX image file").existing_file(),
      string_param("test_labels", "", "the test split's IDX label file").existing_file(),
      string_list_param("class_names", std::vector<std::string>{},
                        "names of classes 0, 1, ...; empty: as many classes as the train split's largest label "
                        "plus one, unnamed")
          .with_role(orchestrate::ParamRole::class_list),
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
        return orchestrate::make_idx_dataset(idx(params, context.split), context.split);
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("idx", "1.1.0", register_components)
