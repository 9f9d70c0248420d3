// Checks that an optimizer skipping on the device (SkipsOnDevice) leaves no
// trace of a skipped step: the parity run, with an overflowed update (inf
// gradients, flag 1) before steps 0, 3 and 7 and a flag of 0 before every
// other step, saved after step 5 and loaded into a fresh optimizer, ends bit
// for bit where the plain run ends, and saves the plain run's state, step
// counts included. Step 0 covers a first step that is skipped; the save
// covers the step counts the optimizer writes.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <sstream>
#include <string>

#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "parity_problem.h"
#include "resume_check.h"
#include "undoes_skipped_steps.h"

namespace orchestrate::optimizer_testing {

// What save() writes for `param`: its state's values by name; none
// without a state.
inline std::map<std::string, c10::IValue> saved_state(const torch::optim::Optimizer& optimizer,
                                                      const at::Tensor& param) {
  torch::serialize::OutputArchive whole;
  optimizer.save(whole);  // settles what the optimizer counts on the device
  std::map<std::string, c10::IValue> values;
  const auto it = optimizer.state().find(param.unsafeGetTensorImpl());
  if (it == optimizer.state().end()) return values;
  torch::serialize::OutputArchive out;
  it->second->serialize(out);
  std::stringstream bytes;
  out.save_to(bytes);
  torch::serialize::InputArchive in;
  in.load_from(bytes);
  for (const auto& key : in.keys()) in.read(key, values[key]);
  return values;
}

inline void expect_same_saved_state(const std::map<std::string, c10::IValue>& saved,
                                    const std::map<std::string, c10::IValue>& expected, const std::string& what) {
  ASSERT_EQ(saved.size(), expected.size()) << what << ": the saved state has other entries";
  for (const auto& [key, value] : expected) {
    const auto it = saved.find(key);
    ASSERT_NE(it, saved.end()) << what << ": the saved state has no " << key;
    if (value.isTensor())
      EXPECT_TRUE(it->second.toTensor().equal(value.toTensor())) << what << ": a skipped step left a trace in " << key;
    else
      EXPECT_EQ(it->second, value) << what << ": a skipped step left a trace in " << key;
  }
}

inline void expect_skip_leaves_no_trace(const OptimizerFactory& create, const Params& params) {
  const double lr = params.real("lr");
  auto plain = ParityModel::initial();
  const auto plain_optimizer = create(params, plain.context());
  train(*plain_optimizer, plain, lr, 0, 10);

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
  const auto resumed_optimizer = saved_and_loaded(*optimizer, create, params, resumed);
  train_skipping(*resumed_optimizer, resumed, 5, 10);

  EXPECT_TRUE(resumed.weight.equal(plain.weight)) << "a skipped step left a trace in the weight";
  EXPECT_TRUE(resumed.bias.equal(plain.bias)) << "a skipped step left a trace in the bias";
  expect_same_saved_state(saved_state(*resumed_optimizer, resumed.weight), saved_state(*plain_optimizer, plain.weight),
                          "the weight's state");
  expect_same_saved_state(saved_state(*resumed_optimizer, resumed.bias), saved_state(*plain_optimizer, plain.bias),
                          "the bias's state");
}

// An optimizer that undoes a skipped step on a GPU reads the flag on the
// CPU instead; it is checked both ways.
inline void expect_device_skip_leaves_no_trace(const OptimizerFactory& create, const Params& params) {
  expect_skip_leaves_no_trace(create, params);
  auto model = ParityModel::initial();
  if (dynamic_cast<optimizers::UndoesSkippedSteps*>(create(params, model.context()).get()) == nullptr) return;
  SCOPED_TRACE("undoing the skipped steps on the CPU, as on a GPU");
  expect_skip_leaves_no_trace(
      [&](const Params& p, const OptimizerContext& context) {
        auto optimizer = create(p, context);
        dynamic_cast<optimizers::UndoesSkippedSteps&>(*optimizer).undo_on_the_cpu_too();
        return optimizer;
      },
      params);
}

}  // namespace orchestrate::optimizer_testing
