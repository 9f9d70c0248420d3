// Builds the components a recipe names, through the registry's factories.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "crash_report/plugin_call.h"
#include "engine/input/rank_shards.h"
#include "engine/recipe/recipe.h"
#include "engine/recipe/settings.h"
#include "engine/setup/compute_setup.h"
#include "orchestrate/dataset.h"
#include "orchestrate/gradient_compression.h"
#include "orchestrate/lr_schedule.h"
#include "orchestrate/model.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/optimizer_wrapper.h"
#include "orchestrate/preprocessing.h"
#include "store/run_records.h"

namespace orchestrate {

struct TrainingComponents {
  std::unique_ptr<Dataset> train_set;
  std::unique_ptr<Dataset> test_set;  // null when evaluation is off
  std::unique_ptr<Preprocessing> train_preprocessing;
  std::unique_ptr<Preprocessing> eval_preprocessing;  // built even when evaluation is off: exports use it
  ModelInput input;                   // the preprocessing's output shape and the dataset's classes
  std::shared_ptr<Model> model;       // already on the device
  std::vector<ParameterGroup> groups;  // torch param group i of the optimizer is groups[i]
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::vector<std::unique_ptr<OptimizerWrapper>> wrappers;  // in recipe order
  // Why an update skipped for inf/nan gradients cannot be skipped on the
  // device (optimizer.h's SkipsOnDevice), naming the optimizer or wrapper; "" when it can.
  std::string device_skip_blocker;
  std::unique_ptr<LrSchedule> schedule;  // warm-up included; indexed by update
  std::unique_ptr<GradientCompressor> compressor;  // null: gradients are all-reduced densely
  std::shared_ptr<const RankShards> shards;  // how the ranks split train_set
  std::int64_t micro_batches_per_update = 1;  // > 1 with batch_gradients
  std::int64_t micro_batches_per_epoch = 0;
  std::int64_t updates_per_epoch = 0;
  std::int64_t total_updates = 0;
  std::int64_t epochs = 0;  // epochs needed to run total_updates
  // Loss weight of each auxiliary classifier the model declares ([loss] aux_weight or its own).
  std::map<std::string, double> aux_weights;
  // What [checkpoint] init_from loaded and skipped, and what was frozen.
  std::vector<TensorRecord> tensor_records;
  // The plugins behind the components, named to a crash inside one of their
  // calls (crash_handler.h).
  struct CallSites {
    PluginCallSite train_set, test_set, train_preprocessing, eval_preprocessing, model, optimizer, schedule,
        compressor;
    std::vector<PluginCallSite> wrappers;  // as `wrappers`
  } sites;
};

// The plugin behind component `name` of `kind`, for crash reports.
PluginCallSite plugin_call_site(const Registry& registry, ComponentKind kind, const std::string& name);

// Any exception a factory throws comes back as an orchestrate Error naming the
// recipe table and component, so a plugin bug or bad data never aborts the host.
// The datasets report what the run should record (bad data) to `data_events`.
TrainingComponents build_components(const Settings& settings, const Registry& registry, const ComputeSetup& compute,
                                    DataEventSink* data_events = nullptr);

// The pieces of build_components that `orchestrate eval` needs too, so both
// build them the same way. The [data] test split, whatever [eval] enabled says:
std::unique_ptr<Dataset> build_test_set(const Settings& settings, const Registry& registry);
// The [data] train split (and `orchestrate bench-input`'s):
std::unique_ptr<Dataset> build_train_set(const Settings& settings, const Registry& registry,
                                         DataEventSink* events = nullptr);
// [run] shuffle_buffer_size when the training set is a stream (DatasetInfo::
// sequential); a RecipeError for a random-access dataset, which is always
// fully shuffled.
std::int64_t stream_shuffle_buffer(const Settings& settings, const Dataset& train_set);
// The [preprocessing] variant for a split described by `data`:
std::unique_ptr<Preprocessing> build_preprocessing(const Settings& settings, const Registry& registry,
                                                   const DatasetInfo& data, PreprocessingVariant variant);
// What the model sees: the preprocessing's output shape, the dataset's classes.
ModelInput model_input(const Preprocessing& preprocessing, const DatasetInfo& data);
// The [model] for `input`, on the device, in the setup's memory format, with
// the weights its factory initialised:
std::shared_ptr<Model> build_model(const Settings& settings, const Registry& registry, const ModelInput& input,
                                   const ComputeSetup& compute);

// The run's length in updates: [run] max_steps when set, else its epochs.
std::int64_t run_length_in_updates(std::int64_t max_steps, std::int64_t epochs, std::int64_t updates_per_epoch);
// The [schedule] (with its warm-up) for a run of `total_updates`:
std::unique_ptr<LrSchedule> build_schedule(const Settings& settings, const Registry& registry,
                                           std::int64_t updates_per_epoch, std::int64_t total_updates);

// The plugins that provide the recipe's components, for the run record.
std::vector<PluginRecord> plugins_used(const Settings& settings, const Registry& registry);

}  // namespace orchestrate
