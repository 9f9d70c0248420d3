// What a part of a run keeps across a checkpoint and --resume, as torch
// modules and torchtitan's components do: its state as named tensors, given
// to the checkpoint when one is saved and handed back when a run resumes
// from it. A part with nothing to keep overrides neither method.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>

#include "orchestrate/api.h"

namespace orchestrate {

// Named tensors, saved as they are (any dtype and shape; on the device or
// not, they come back on the CPU): a counter is a 0-dim int64 tensor.
using StateDict = std::map<std::string, at::Tensor>;

class ORCHESTRATE_API Stateful {
 public:
  virtual ~Stateful();
  // The state to save now; empty (the default): nothing.
  virtual StateDict state_dict() const;
  // Restores what state_dict returned in the run that saved the checkpoint,
  // before the resumed run's first update. Not called for a checkpoint that
  // holds no state of this part (one saved before it kept any).
  virtual void load_state_dict(const StateDict& state);
};

}  // namespace orchestrate
