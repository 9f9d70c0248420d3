// Batch-gradient accumulation: MoXing's `batch_gradients` wrapper, which its
// 32k-batch ResNet-50 recipe uses to reach the global batch (8 micro-batches
// per update there) and to all-reduce once per update instead of once per
// micro-batch (MoXing's sync_on_apply).
//
// The accumulation belongs to the host's step loop, not to this object: the
// host reads WrapperRules::micro_batches, runs that many forward/backward
// passes with the loss divided by it (so the gradients are the mean), syncs
// across ranks once and only then runs the wrapper chain. That is why the
// rule must come first, and why the wrapper does nothing at step time; the
// schedule counts updates, as MoXing's lr_global_step = global_step / num_batches.
#include <memory>

#include "orchestrate/optimizer_wrapper.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"

namespace {

using orchestrate::Params;

// Does nothing at step time: the host does the accumulating (see above).
class BatchGradients final : public orchestrate::OptimizerWrapper {};

std::unique_ptr<orchestrate::OptimizerWrapper> make_batch_gradients(const Params&,
                                                                    const orchestrate::WrapperContext&) {
  return std::make_unique<BatchGradients>();
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  // Required: 1 would make the wrapper a silent no-op, and the right count
  // follows from the global batch the recipe is after (MoXing computes it as
  // total_batch / workers / gpus / batch_size).
  ParamSchema schema{
      int_param("num_batches", std::nullopt,
                "micro-batches whose mean gradient makes one update: the global batch is "
                "num_batches x batch_size x world size")
          .at_least(1),
  };
  WrapperRules rules;
  rules.must_come_first = true;  // every other wrapper must see the accumulated gradient
  rules.micro_batches = [](const Params& params) { return params.integer("num_batches"); };
  rules.only_rewrites_gradients = true;  // it does nothing at step time
  registry.optimizer_wrappers().add("batch_gradients",
                                    "apply the mean gradient of num_batches micro-batches as one update (accumulation)",
                                    std::move(schema), make_batch_gradients, std::move(rules));
}

}  // namespace

ORCHESTRATE_PLUGIN("batch_gradients", "1.0.0", register_components)
