// FTRL-Proximal with TensorFlow's ApplyFtrl rule and FastNN's defaults
// (learning_rate_power -0.5, initial_accumulator_value 0.1, l1 0, l2 0);
// the rule, its source and how the host's weight decay enters are in
// foreach_ftrl.h.
#include <memory>

#include "foreach_ftrl.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"

namespace {

using orchestrate::OptimizerContext;
using orchestrate::Params;
using orchestrate::optimizers::FtrlOptions;

std::unique_ptr<torch::optim::Optimizer> make_ftrl(const Params& params, const OptimizerContext& context) {
  const auto options = FtrlOptions(params.real("lr"))
                           .lr_power(params.real("learning_rate_power"))
                           .initial_accumulator_value(params.real("initial_accumulator_value"))
                           .l1(params.real("l1"))
                           .l2(params.real("l2"));
  return std::make_unique<orchestrate::optimizers::ForeachFtrl>(orchestrate::make_param_groups(context, options),
                                                                options);
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("lr", 0.01, "base learning rate (FastNN's learning_rate default); the schedule scales from it")
          .greater_than(0)
          .with_role(orchestrate::ParamRole::learning_rate),
      real_param("learning_rate_power", -0.5,
                 "how the per-coordinate rate falls with the accumulated squared gradients: lr / accum^(-power) "
                 "(FastNN's ftrl_learning_rate_power; -0.5 is the paper's)")
          .at_most(0),
      real_param("initial_accumulator_value", 0.1, "starting value of the accumulators (FastNN's default)").at_least(0),
      real_param("l1", 0.0, "L1 regularisation strength; coordinates with |linear| <= l1 become exactly 0")
          .at_least(0),
      real_param("l2", 0.0, "L2 regularisation strength of the FTRL objective (TF's l2, not the host's weight decay)")
          .at_least(0),
  };
  registry.optimizers().add("ftrl", "FTRL-Proximal with TensorFlow's update rule (foreach kernels)", std::move(schema),
                            make_ftrl);
}

}  // namespace

ORCHESTRATE_PLUGIN("ftrl", "1.0.0", register_components)
