// `orchestrate export serving` and the [export] table: a trained model, from
// a checkpoint or at the end of a run, into a Triton model repository
// (core/export/model_repository.h), with its labels and preprocessing.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "engine/recipe/core_defaults.h"
#include "engine/recipe/recipe.h"
#include "engine/recipe/settings.h"
#include "export/model_repository.h"
#include "orchestrate/model.h"
#include "orchestrate/preprocessing.h"
#include "orchestrate/registry.h"

namespace orchestrate {

// A model with what it was built for: enough to serve it.
struct ServableModel {
  std::shared_ptr<Model> model;
  ModelInput input;
  std::vector<std::string> class_names;  // may be empty: the labels are then "0", "1", ...
  std::string run_name;
  std::map<std::string, std::string> provenance;  // what export.json records
  ServingTransform transform;  // the eval preprocessing's, written to preprocessing.json
};

// Rebuilds the model of a checkpoint (its recipe's [model], with the input
// shape and classes it recorded; older checkpoints load the recipe's data set
// to learn them) and its [preprocessing]'s eval variant, and loads its
// weights, on the CPU.
ServableModel load_servable_checkpoint(const std::string& checkpoint, const Registry& registry);

// `recipe`'s model (for its test split's images and classes, as `orchestrate
// eval` builds it) with the weights of `weights`: a .safetensors file (weights
// imported from torchvision), or a checkpoint directory whose recipe is not
// the one to build.
ServableModel load_servable_weights(const Recipe& recipe, const std::string& weights, const Registry& registry);

// Traces the model and writes the next version of `settings.name` (default:
// the run name) under `settings.dir`. The model is left in eval mode on the CPU.
ExportedVersion export_for_serving(ServableModel& servable, const ExportSettings& settings);

// [export]'s keys at their specs' defaults, for the commands that export
// without a recipe's [export] table: `export serving` and `export onnx` write
// what a recipe's would.
ExportSettings export_defaults(const CoreDefaults& defaults = CoreDefaults::builtin());

}  // namespace orchestrate
