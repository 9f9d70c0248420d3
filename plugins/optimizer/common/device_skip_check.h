// Checks that an optimizer skipping on the device (SkipsOnDevice) leaves no
// trace of a skipped step: the parity run, with an overflowed update (inf
// gradients, flag 1) before steps 0, 3 and 7 and a flag of 0 before every
// other step, saved after step 5 and loaded into a fresh optimizer, ends bit
// for bit where the plain run ends. Step 0 covers a first step that is
// skipped; the save covers the step counts the optimizer writes.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "parity_problem.h"
#include "resume_check.h"

namespace orchestrate::optimizer_testing {

inline void expect_device_skip_leaves_no_trace(const OptimizerFactory& create, const Params& params) {
  const double lr = params.real("lr");
  auto plain = ParityModel::initial();
  train(*create(params, plain.context()), plain, lr, 0, 10);

  auto skipping = ParityModel::initial();
  auto optimizer = create(params, skipping.context());
  const auto train_skipping = [&](torch::optim::Optimizer& stepping, ParityModel& model, int first, int last) {
    auto* skipper = dynamic_cast<SkipsOnDevice*>(&stepping);
    ASSERT_NE(skipper, nullptr) << "the optimizer does not implement SkipsOnDevice";
    for (int step = first; step < last; ++step) {
      if (step == 0 || step == 3 || step == 7) {  // what an overflowed fp16 update hands the optimizer
        for (auto* p : {&model.weight, &model.bias})
          p->mutable_grad() = at::full_like(*p, std::numeric_limits<float>::infinity());
        // Memory freed with junk in it just before the step, which a state
        // the step allocates is likely to reuse (the allocator hands out
        // what was freed last first): a state left unwritten then shows.
        for (auto* p : {&model.weight, &model.bias}) at::full_like(*p, 1234.5).fill_(-987.25);
        skipper->skip_next_step_if(at::ones({}));
        stepping.step();
      }
      skipper->skip_next_step_if(at::zeros({}));
      train(stepping, model, lr, step, step + 1);
    }
  };
  train_skipping(*optimizer, skipping, 0, 5);

  auto resumed = skipping.copy();
  train_skipping(*saved_and_loaded(*optimizer, create, params, resumed), resumed, 5, 10);

  EXPECT_TRUE(resumed.weight.equal(plain.weight)) << "a skipped step left a trace in the weight";
  EXPECT_TRUE(resumed.bias.equal(plain.bias)) << "a skipped step left a trace in the bias";
}

}  // namespace orchestrate::optimizer_testing
