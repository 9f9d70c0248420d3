// Optimizers are torch::optim::Optimizer subclasses built by an OptimizerFactory
// (see registry.h). The trainer sets every param group's learning rate from
// the schedule before each step, so an optimizer must honour
// OptimizerOptions::set_lr.
#pragma once

#include <torch/optim/optimizer.h>

#include "orchestrate/registry.h"
