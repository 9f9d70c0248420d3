// `orchestrate eval RECIPE --checkpoint PATH`: which weights to evaluate,
// the position they were saved at, and the training run they belong to.
#pragma once

#include <cstdint>
#include <string>

#include "store/run_store.h"

namespace orchestrate {

struct EvalTarget {
  std::string argument;      // PATH as given
  std::string checkpoint;    // the checkpoint directory; "" for a bare .safetensors file
  std::string weights_file;  // what is loaded: the checkpoint's model.safetensors, or the file itself
  std::int64_t step = 0;     // updates applied to the weights when saved; 0 for a bare file
  std::int64_t epoch = 0;    // 1-based epoch of that update; 0 for a bare file
  std::string model;         // the model component that saved them; "" for a bare file
  std::int64_t source_run_id = 0;  // the training run in the store that saved the checkpoint; 0: none
  std::string provenance;    // one line: what is evaluated and whose it is, for the eval run's record
};

// PATH is a checkpoint directory, a run id or name of `store` (its newest
// checkpoint on disk) or a .safetensors file. `store` is null when the run
// store does not exist yet. A checkpoint is linked to the run its
// checkpoint.json names only when `store` records it as that run's: copied
// from another run store, the same run id may mean another run here.
// Throws UsageError or RecipeError (exit code 2) saying what PATH is
// instead; a damaged checkpoint is an Error.
EvalTarget resolve_eval_target(const std::string& path, const RunStore* store);

}  // namespace orchestrate
