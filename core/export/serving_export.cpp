#include "export/serving_export.h"

#include <torch/version.h>

#include <filesystem>

#include "checkpoint/model_state.h"
#include "engine/recipe/core_settings_tables.h"
#include "engine/recipe/recipe.h"
#include "engine/recipe/recipe_settings.h"
#include "engine/setup/components.h"
#include "engine/setup/compute_setup.h"
#include "engine/setup/weight_transfer.h"
#include "export/serving_module.h"
#include "orchestrate/api.h"
#include "orchestrate/dataset.h"
#include "orchestrate/error.h"
#include "store/utc_now.h"

namespace orchestrate {

namespace fs = std::filesystem;

namespace {

// The checkpoint's own recipe, as it was resolved. init_from only mattered
// for building the run, and its file may be long gone.
Recipe checkpoint_recipe(const std::string& checkpoint, const Registry& registry) {
  const std::vector<Override> forget_init{{{"checkpoint", "init_from"}, "\"\"", "checkpoint.init_from="},
                                          {{"checkpoint", "exclude"}, "[]", "checkpoint.exclude=[]"}};
  return load_recipe((fs::path(checkpoint) / kRecipeFile).string(), forget_init, registry);
}

std::vector<std::string> labels_for(const std::vector<std::string>& class_names, std::int64_t num_classes) {
  if (static_cast<std::int64_t>(class_names.size()) == num_classes) return class_names;
  std::vector<std::string> labels;
  for (std::int64_t i = 0; i < num_classes; ++i) labels.push_back(std::to_string(i));
  return labels;
}

}  // namespace

namespace {

// The recipe's model for `info`'s images and classes, with its eval
// preprocessing, and `weights` (a checkpoint directory or a .safetensors file)
// loaded into it, on the CPU.
ServableModel build_servable(const Settings& s, const Registry& registry, const DatasetInfo& info,
                             const std::string& weights) {
  ServableModel servable;
  const auto preprocessing = build_preprocessing(s, registry, info, PreprocessingVariant::eval);
  servable.input = model_input(*preprocessing, info);
  servable.transform = preprocessing->serving_transform();
  servable.class_names = info.class_names;
  servable.model = build_model(s, registry, servable.input, ComputeSetup{});  // on the CPU, contiguous
  load_model_state(*servable.model, read_safetensors(weights_file_of(weights, "export:")), weights);
  return servable;
}

}  // namespace

ServableModel load_servable_checkpoint(const std::string& checkpoint, const Registry& registry) {
  const CheckpointMeta meta = read_checkpoint_meta(checkpoint);
  const Recipe recipe = checkpoint_recipe(checkpoint, registry);
  const Settings& s = settings_of(recipe);
  DatasetInfo info;
  if (meta.input_shape.size() == 3 && meta.num_classes > 0) {
    info = {meta.input_shape[0], meta.input_shape[1], meta.input_shape[2], meta.num_classes, meta.class_names};
  } else {  // written before checkpoints recorded the input: ask the data set
    info = build_test_set(s, registry)->info();
  }
  ServableModel servable = build_servable(s, registry, info, checkpoint);
  servable.run_name = meta.run_name.empty() ? meta.model : meta.run_name;
  auto& p = servable.provenance;
  p["checkpoint"] = fs::absolute(checkpoint).lexically_normal().string();
  p["run_id"] = std::to_string(meta.run_id);
  p["step"] = std::to_string(meta.step);
  p["epoch"] = std::to_string(meta.epoch);
  p["model"] = meta.model;
  for (const auto& [key, value] : meta.recipe_params)
    if (key.rfind("model.", 0) == 0 || key.rfind("data.", 0) == 0) p["recipe." + key] = value;
  for (const auto& [name, value] : meta.metrics) p["metric." + name] = std::to_string(value);
  return servable;
}

ServableModel load_servable_weights(const Recipe& recipe, const std::string& weights, const Registry& registry) {
  const Settings& s = settings_of(recipe);
  // As `orchestrate eval` does: the recipe's test split says the images and classes.
  ServableModel servable = build_servable(s, registry, build_test_set(s, registry)->info(), weights);
  servable.run_name = recipe.run_name();
  auto& p = servable.provenance;
  p["weights"] = fs::absolute(weights).lexically_normal().string();
  p["recipe"] = recipe.path;
  p["model"] = recipe.table("model").plugin;
  return servable;
}

ExportedVersion export_for_serving(ServableModel& servable, const ExportSettings& settings) {
  if (settings.dir.empty()) throw UsageError("export: no model repository directory given (--out DIR or [export] dir)");
  const ModelInput& in = servable.input;
  torch::jit::Module module = trace_serving_module(*servable.model, in.channels, in.height, in.width, settings.top_k);
  ServingExport spec;
  spec.model_name = settings.name.empty() ? servable.run_name : settings.name;
  spec.signature = {in.channels, in.height, in.width, in.num_classes, settings.top_k, settings.max_batch_size};
  spec.labels = labels_for(servable.class_names, in.num_classes);
  // What the eval preprocessing does (none: pixels scaled to [0, 1] at the
  // model's size): that is what a client must reproduce.
  spec.preprocessing.channels = in.channels;
  spec.preprocessing.height = in.height;
  spec.preprocessing.width = in.width;
  spec.preprocessing.central_fraction = servable.transform.central_fraction;
  spec.preprocessing.resize_shorter = servable.transform.resize_shorter;
  spec.preprocessing.mean = servable.transform.mean;
  spec.preprocessing.std = servable.transform.std;
  spec.provenance = servable.provenance;
  spec.provenance["orchestrate_version"] = version();
  spec.provenance["torch_version"] = TORCH_VERSION;
  spec.provenance["exported_at"] = utc_now_iso();
  return write_model_version(settings.dir, spec, module);
}

ExportSettings export_defaults(const CoreDefaults& defaults) { return export_keys().read(defaults.table("export")); }

}  // namespace orchestrate
