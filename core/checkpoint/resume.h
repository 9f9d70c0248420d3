// `orchestrate run RECIPE --resume [RUN|CHECKPOINT]`: which checkpoint to
// continue from, and whether the recipe may continue it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "engine/recipe/recipe.h"
#include "store/run_records.h"

namespace orchestrate {

class RunStore;

// The checkpoint directory `argument` names: a checkpoint path; a run id or
// name (that run's newest checkpoint); or "" (the newest checkpoint of the
// newest run of this recipe file, or "" when none has one yet: a preempted
// job restarted with its first command line, `run R --resume`, then starts
// the run afresh, as Lightning's ckpt_path="last" does). A named checkpoint
// or run that is missing is a UsageError saying what is missing.
// "auto" is "" spelled out, as torchrun users write it (a directory or a
// run called "auto" is not looked for).
inline constexpr const char* kResumeAuto = "auto";
std::string resolve_resume_target(const std::string& argument, const Recipe& recipe, const RunStore& store);

// The newest of a run's recorded checkpoints that is still on disk, or "".
std::string newest_checkpoint_of(const RunStore& store, std::int64_t run_id);

// Compares the checkpoint's recipe with the one resuming it. A changed key
// that changes the trajectory (data, model, optimizer, batch, ...) is a
// RecipeError naming it; the allowed changes (log cadence, checkpoint
// interval, evaluation: each key's spec says, ParamSpec::resume_safe, a
// component's key in the plugin `registry` has for it) are returned as
// "key: old -> new", to be recorded.
// A job resumed on `world_size` ranks may change [run] batch_size only so
// that the global batch (batch_size x ranks) stays the checkpoint's; with the
// batch size unchanged, another rank count is refused, since it would change
// the global batch. `judged`: keys whose change the caller has judged for
// this checkpoint (the run's length, resume_length.h): "" allows it, else the
// reason it changes the trajectory, said with it.
std::vector<std::string> check_resume_recipe(const CheckpointMeta& checkpoint, const std::string& checkpoint_path,
                                             const Recipe& recipe, const Registry& registry, int world_size = 1,
                                             const std::map<std::string, std::string>& judged = {});

}  // namespace orchestrate
