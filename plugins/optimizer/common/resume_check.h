// Checks that an optimizer's save()/load() make resuming exact: 5 steps,
// save, load into a fresh optimizer over a rebuilt model, 5 more steps give
// bit for bit the weights of 10 uninterrupted steps (the parity run's
// model, groups and lr schedule).
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <memory>
#include <sstream>

#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "parity_problem.h"

namespace orchestrate::optimizer_testing {

// A fresh optimizer from `create` over `model`, holding what `saved_from`
// saves: a resumed run's.
inline std::unique_ptr<torch::optim::Optimizer> saved_and_loaded(const torch::optim::Optimizer& saved_from,
                                                                 const OptimizerFactory& create, const Params& params,
                                                                 const ParityModel& model) {
  std::stringstream saved;
  torch::serialize::OutputArchive out;
  saved_from.save(out);
  out.save_to(saved);
  auto loaded = create(params, model.context());
  torch::serialize::InputArchive in;
  in.load_from(saved);
  loaded->load(in);
  return loaded;
}

// `stateful`: the optimizer keeps per-parameter state, so resuming without
// loading it must give different weights (which shows load() restored it).
inline void expect_resume_is_exact(const OptimizerFactory& create, const Params& params, bool stateful = true) {
  const double lr = params.real("lr");
  auto uninterrupted = ParityModel::initial();
  train(*create(params, uninterrupted.context()), uninterrupted, lr, 0, 10);

  auto first_half = ParityModel::initial();
  const auto before_save = create(params, first_half.context());
  train(*before_save, first_half, lr, 0, 5);
  auto resumed = first_half.copy();
  train(*saved_and_loaded(*before_save, create, params, resumed), resumed, lr, 5, 10);

  EXPECT_TRUE(resumed.weight.equal(uninterrupted.weight)) << "weight differs after resuming";
  EXPECT_TRUE(resumed.bias.equal(uninterrupted.bias)) << "bias differs after resuming";

  if (!stateful) return;
  auto without_state = first_half.copy();
  train(*create(params, without_state.context()), without_state, lr, 5, 10);
  EXPECT_FALSE(without_state.weight.equal(uninterrupted.weight)) << "resuming without the saved state changed nothing";
}

}  // namespace orchestrate::optimizer_testing
