// A dataset that calls abort() on a pipeline thread, as a failed assert in a
// decoder would: a small mock dataset, except for example `index`.
#include <cstdlib>
#include <memory>

#include "orchestrate/dataset.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"

namespace {

class AbortingDataset final : public orchestrate::Dataset {
 public:
  AbortingDataset(std::unique_ptr<orchestrate::Dataset> inner, std::int64_t index)
      : inner_(std::move(inner)), index_(index) {}
  orchestrate::DatasetInfo info() const override { return inner_->info(); }
  std::int64_t size() const override { return inner_->size(); }
  orchestrate::Example example(const orchestrate::SampleRequest& request) const override {
    if (request.index == index_) std::abort();
    return inner_->example(request);
  }

 private:
  std::unique_ptr<orchestrate::Dataset> inner_;
  std::int64_t index_;
};

void register_components(orchestrate::Registry& registry) {
  registry.datasets().add(
      "abort_at_index", "the mock dataset, but abort() when example N is read (a test of crash reports)",
      {orchestrate::int_param("index", 5, "the example whose reading aborts").at_least(0)},
      [](const orchestrate::Params& params, const orchestrate::DatasetContext& context) {
        orchestrate::Params mock;  // LeNet's 28x28 grey images, few of them
        for (const auto& [key, value] : {std::pair<const char*, std::int64_t>{"channels", 1}, {"height", 28},
                                         {"width", 28}, {"train_size", 64}, {"test_size", 16}})
          mock.set(key, value);
        return std::make_unique<AbortingDataset>(orchestrate::build_dataset(context, "mock", mock),
                                                 params.integer("index"));
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("aborting_dataset", "1.0.0", register_components)
