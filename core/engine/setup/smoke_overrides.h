// `orchestrate run RECIPE --smoke`: the same recipe, shrunk so that it runs
// in seconds on any machine and proves that its components load and step
// together. Everything a smoke run changes is here, applied to the parsed
// recipe (after --set) before it is validated, so the result is checked like
// any recipe and `--dry-run --smoke` prints it.
//
// Changed: [data] becomes `mock` data with the class count and channels the
// recipe's [data] declares (num_classes, class_names or classes; channels),
// at the smallest image side the model's factory accepts (tried in
// kSmokeSides order); [preprocessing] keeps its plugin at that size;
// [run] takes 2 updates of 2 images on one intra-op thread, logging each;
// [eval] 2 batches of 2; checkpoints, exports, snapshots and PCA matrices go
// to a scratch directory; fp16 becomes fp32 off CUDA (the CPU's fp16 has no
// fast kernels). A smoke run reads
// none of the user's files, which may not fit its model: init_from becomes
// the model's own initial weights, written to the scratch directory, so
// loading (exclude, strict, frozen) still runs, on weights that are not the
// pretrained ones; a stage 2 of dimension-reduce training gets three
// snapshots of those weights plus noise for stage 1's, 2 components, and
// computes its PCA matrix.
// Kept: the model, the optimizer and its wrappers and groups, the schedule,
// precision where it runs, the gradient compression, the hooks, every
// checkpoint rule but the directory.
#pragma once

#include <string>
#include <vector>

#include "engine/recipe/core_defaults.h"
#include "limits/checked_toml.h"

#include "orchestrate/registry.h"

namespace orchestrate {

class SmokeOverrides {
 public:
  // `scratch_dir`: where the smoke run's files go (created when needed).
  // `defaults`: what a key the recipe leaves out reads as (its spec's).
  SmokeOverrides(const Registry& registry, std::string scratch_dir,
                 const CoreDefaults& defaults = CoreDefaults::builtin());

  // Rewrites `root`, a recipe document with its --set overrides applied.
  void apply(toml::table& root);

  // What apply() changed, one line each, for the user.
  const std::vector<std::string>& notes() const { return notes_; }
  const std::string& scratch_dir() const { return scratch_dir_; }

 private:
  const Registry& registry_;
  std::string scratch_dir_;
  std::vector<std::string> notes_;
  const CoreDefaults& defaults_;
};

}  // namespace orchestrate
