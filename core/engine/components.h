// Builds the components a recipe names, through the registry's factories.
#pragma once

#include <memory>

#include <c10/core/Device.h>

#include "orchestrate/dataset.h"
#include "orchestrate/lr_schedule.h"
#include "orchestrate/model.h"
#include "orchestrate/optimizer.h"
#include "recipe.h"
#include "run_store.h"

namespace orchestrate {

struct TrainingComponents {
  std::unique_ptr<Dataset> train_set;
  std::unique_ptr<Dataset> test_set;  // null when evaluation is off
  std::shared_ptr<Model> model;       // already on the device
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<LrSchedule> schedule;
  std::int64_t steps_per_epoch = 0;
  std::int64_t total_steps = 0;
  std::int64_t epochs = 0;  // epochs needed to run total_steps
};

// Any exception a factory throws comes back as an orchestrate Error naming the
// recipe table and component, so a plugin bug or bad data never aborts the host.
TrainingComponents build_components(const Recipe& recipe, const Registry& registry, const c10::Device& device);

// The plugins that provide the recipe's components, for the run record.
std::vector<PluginRecord> plugins_used(const Recipe& recipe, const Registry& registry);

}  // namespace orchestrate
