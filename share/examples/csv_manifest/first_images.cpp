// A wrapper dataset: the first `count` images of an image folder, built
// through the registry with build_dataset (orchestrate/dataset.h), as a
// subset, mixture or relabelling of a built-in dataset would be.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>

#include "orchestrate/dataset.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"

namespace {
using namespace orchestrate;

class FirstImages final : public Dataset {
 public:
  FirstImages(const Params& params, const DatasetContext& context) {
    Params folder;
    folder.set("root", params.string("root"));
    folder.set("channels", params.integer("channels"));
    inner_ = build_dataset(context, "image_folder", folder);
    size_ = std::min(params.integer("count"), inner_->size());
  }
  DatasetInfo info() const override { return inner_->info(); }
  std::int64_t size() const override { return size_; }
  Example example(const SampleRequest& request) const override {
    if (request.index < 0 || request.index >= size_) throw std::out_of_range("first_images: no such index");
    return inner_->example(request);
  }

 private:
  std::unique_ptr<Dataset> inner_;
  std::int64_t size_ = 0;
};

void register_components(Registry& registry) {
  registry.datasets().add(
      "first_images", "the first `count` images of an image folder (a wrapper around image_folder)",
      {string_param("root", std::nullopt, "the image folder, as image_folder's root"),
       int_param("channels", 3, "1 (grey) or 3 (RGB)").between(1, 3),
       int_param("count", 8, "how many images of each split").at_least(1)},
      [](const Params& params, const DatasetContext& context) { return std::make_unique<FirstImages>(params, context); });
}
}  // namespace

ORCHESTRATE_PLUGIN("first_images", "1.0.0", register_components)
