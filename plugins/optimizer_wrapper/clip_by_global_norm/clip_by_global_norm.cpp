// Gradient clipping by global norm: FastNN's `max_gradient_norm` (PAISoar's
// clip_norm), computed as torch.nn.utils.clip_grad_norm_ does (norm_type 2):
//   total = ||(||g_1||, ..., ||g_n||)||,  g_i *= min(1, max_norm / (total + 1e-6))
// over every gradient of every group. Unlike clip_grad_norm_ in C++, which
// returns the norm as a double and so waits for the device, everything stays
// on the device; the norm before clipping is logged as "train/grad_norm".
//
// No ordering rule: it clips the gradients as they are where the recipe puts
// it (after accumulation, which the host does first, and before the base step).
#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "../common/update_tensors.h"
#include "orchestrate/optimizer_wrapper.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"

namespace {

using namespace orchestrate::wrapper_support;
using orchestrate::ParameterGroup;
using orchestrate::Params;
using orchestrate::UpdateView;

// torch.nn.utils.clip_grad_norm_'s guard against a zero norm.
constexpr double kNormEpsilon = 1e-6;

class ClipByGlobalNorm final : public orchestrate::OptimizerWrapper {
 public:
  ClipByGlobalNorm(double max_norm, std::vector<ParameterGroup> groups)
      : max_norm_(max_norm), groups_(std::move(groups)) {}

  void before_step(UpdateView& view) override {
    at::NoGradGuard no_grad;
    std::vector<at::Tensor> gradients;
    for (const auto& group : groups_)
      for (auto& gradient : gradients_of(parameters_with_gradients(group))) gradients.push_back(std::move(gradient));
    if (gradients.empty()) return;
    const auto total_norm = at::linalg_vector_norm(l2_norms(gradients), 2);
    const auto clip_coefficient = at::clamp_max(max_norm_ / (total_norm + kNormEpsilon), 1.0);
    at::_foreach_mul_(gradients, clip_coefficient);
    view.metrics["train/grad_norm"] = total_norm;
  }

 private:
  double max_norm_;
  std::vector<ParameterGroup> groups_;
};

std::unique_ptr<orchestrate::OptimizerWrapper> make_clip(const Params& params,
                                                         const orchestrate::WrapperContext& context) {
  return std::make_unique<ClipByGlobalNorm>(params.real("max_norm"), context.groups);
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  // Required: FastNN's default (None) means "no clipping", which here is "no
  // wrapper"; a good bound depends on the model and loss, so the recipe says it.
  ParamSchema schema{
      real_param("max_norm", std::nullopt,
                 "largest global L2 norm of all gradients together; larger ones are scaled down to it "
                 "(FastNN's max_gradient_norm)")
          .greater_than(0),
  };
  WrapperRules rules;
  rules.only_rewrites_gradients = true;
  registry.optimizer_wrappers().add("clip_by_global_norm",
                                    "scale all gradients by min(1, max_norm / global L2 norm), as clip_grad_norm_",
                                    std::move(schema), make_clip, std::move(rules));
}

}  // namespace

ORCHESTRATE_PLUGIN("clip_by_global_norm", "1.0.0", register_components)
