// Optimizer wrappers: `[[optimizer.wrappers]]` entries that change what the
// base optimizer does at each update (LARS, LAMB, clipping, accumulation).
//
// Gradients flow through the wrappers in the order the recipe lists them,
// then into the base optimizer. The host checks the order against each
// wrapper's WrapperRules when the recipe loads.
#pragma once

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "orchestrate/api.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/stateful.h"

namespace orchestrate {

// WrapperRules, declared at registration, are in registry.h.

// What a wrapper factory is given. Grows only at the end.
struct WrapperContext {
  std::vector<ParameterGroup> groups;  // as the host formed them, true weight decay included
  double base_lr = 0.0;
};

// One update as a wrapper sees it.
struct UpdateView {
  torch::optim::Optimizer& optimizer;  // the base optimizer; group i is context group i, lr already set
  // Scalars to log, kept on the device (0-dim tensors) and read only every
  // log_every updates, so a wrapper never forces a host-device sync.
  std::map<std::string, at::Tensor>& metrics;
  std::int64_t update = 0;  // 0-based index of this update
  // When the optimizer skips on the device (SkipsOnDevice): its flag, a
  // 0-dim float32 on the parameters' device, 1 when this update is skipped.
  // A wrapper declaring WrapperRules::honours_skip_flag must then change
  // nothing the skip would not (weights, its state), without reading it on
  // the host. Undefined when the host decided: then a skipped update never
  // reaches the wrappers.
  at::Tensor skip_flag;
};

// State that must survive a checkpoint (a wrapper's own buffers) is
// Stateful's state_dict and load_state_dict; none by default.
class ORCHESTRATE_API OptimizerWrapper : public Stateful {
 public:
  ~OptimizerWrapper() override;
  // The gradients are this update's final ones (accumulated, unscaled,
  // synchronised across ranks). May rewrite them.
  virtual void before_step(UpdateView& view);
  // After the base optimizer has stepped.
  virtual void after_step(UpdateView& view);
};

}  // namespace orchestrate
