// A resume that changes the run's length ([run] max_steps or epochs): "try
// 20 steps, then train on to the full length". It keeps the trajectory, and
// so may go on as the same run, when the schedule gives every update done
// the learning rate it would have had in a run of the new length from the
// start: a constant or a piecewise schedule in epochs does; a cosine or
// polynomial decay over the run's length does not. The length reaches
// nothing else of the update (components.cpp: only the schedule reads it).
#pragma once

#include <string>

#include "checkpoint/checkpoint_meta.h"
#include "engine/recipe/settings.h"
#include "orchestrate/registry.h"

namespace orchestrate {

// Why changing the length from the checkpoint's to the recipe's would change
// the trajectory (one phrase), or "" when it would not or the length is the
// same. A checkpoint that does not record its updates per epoch cannot be
// judged, and says so.
std::string length_change_problem(const CheckpointMeta& checkpoint, const Settings& settings,
                                  const Registry& registry);

}  // namespace orchestrate
