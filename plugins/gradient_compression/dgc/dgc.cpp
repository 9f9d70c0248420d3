// Deep Gradient Compression (Lin, Han, Mao, Wang, Dally, ICLR 2018,
// https://arxiv.org/abs/1712.01887), as MoXing's distributed_replicated_dgc
// runs it: each rank sends only the largest entries of its accumulated
// gradient and keeps the rest for later updates.
//
// Per update, for each parameter w with local gradient g (the mean over this
// rank's micro-batches), momentum m, weight decay wd and N ranks:
//   local clipping:  g <- g * min(1, (clip_norm / sqrt(N)) / ||g_all||)  (clip_norm > 0;
//                    ||g_all|| is the norm over all of the rank's gradients)
//   weight decay:    g <- g + wd * w
//   momentum correction (vanilla):  u <- m * u + g;      v <- v + u
//                    (nesterov):    u <- m * (u + g);    v <- v + u + g
//   top-k:           S = the k = ceil(numel * (1 - sparsity)) entries of largest |v|
//   send v[S];       v[S] <- 0   (local accumulation keeps the rest)
//   momentum factor masking:        u[S] <- 0
// The host sums what all ranks sent, divides by N, and plain SGD (no
// momentum, no weight decay: both are applied here) steps with the result.
//
// With sparsity 0 and masking off this is exactly momentum SGD on the mean
// gradient (torch.optim.SGD's momentum and nesterov rules), which the tests
// check. One-dimensional tensors (biases, normalization) are sent whole, as
// the DGC reference implementation does (it compresses only dim > 1): they
// are a negligible share of the bytes, and they keep plain momentum.
//
// The sparsity warm-up is sparsity_schedule.h. Selection is exact top-k
// (at::topk); the paper samples to estimate the threshold, which matters
// only for tensors far larger than the ones this is used with so far.
#include <ATen/ATen.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/gradient_compression.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "sparsity_schedule.h"

namespace {

using orchestrate::CompressedGradient;
using orchestrate::CompressionContext;
using orchestrate::CompressionStep;
using orchestrate::Params;
using orchestrate::dgc::elements_to_send;
using orchestrate::dgc::SparsitySchedule;

struct DgcSettings {
  double momentum = 0.9;
  bool nesterov = false;
  bool momentum_factor_masking = true;
  double clip_norm = 0.0;  // 0: no local clipping
  bool compress_vectors = false;
};

// One parameter and the state DGC keeps for it on this rank.
struct Slot {
  std::string name;
  at::Tensor parameter;
  double weight_decay = 0.0;
  bool sparse = true;    // false: sent whole every update
  at::Tensor momentum;   // u, flattened; undefined when momentum is 0
  at::Tensor residual;   // v, flattened; undefined for tensors sent whole
};

class DeepGradientCompression final : public orchestrate::GradientCompressor {
 public:
  DeepGradientCompression(DgcSettings settings, SparsitySchedule schedule, const CompressionContext& context)
      : settings_(settings), schedule_(std::move(schedule)), world_size_(context.world_size) {
    for (const auto& group : context.groups)
      for (const auto& parameter : group.parameters) {
        Slot slot{parameter.name, parameter.tensor, group.weight_decay,
                  settings_.compress_vectors || parameter.tensor.dim() > 1};
        const auto flat_zeros = [&] { return at::zeros({parameter.tensor.numel()}, parameter.tensor.options()); };
        if (settings_.momentum != 0) slot.momentum = flat_zeros();
        if (slot.sparse) slot.residual = flat_zeros();
        slots_.push_back(std::move(slot));
      }
  }

  std::vector<CompressedGradient> compress(const CompressionStep& step) override {
    at::NoGradGuard no_grad;
    const double sparsity = schedule_.at(step.epoch);
    const at::Tensor clip = local_clip_factor();
    std::vector<CompressedGradient> out;
    std::int64_t sent = 0, total = 0;
    for (auto& slot : slots_) {
      at::Tensor g = slot.parameter.grad().detach().reshape({-1});
      if (clip.defined()) g = g * clip;
      if (slot.weight_decay != 0) g = g + slot.weight_decay * slot.parameter.detach().reshape({-1});
      out.push_back(slot.sparse ? sparsify(slot, g, sparsity) : whole(slot, g));
      sent += out.back().values.numel();
      total += slot.parameter.numel();
    }
    step.metrics["train/dgc_sparsity"] = at::scalar_tensor(sparsity, at::kDouble);
    step.metrics["train/dgc_density"] = at::scalar_tensor(static_cast<double>(sent) / static_cast<double>(total), at::kDouble);
    return out;
  }

  orchestrate::StateDict state_dict() const override {
    orchestrate::StateDict out;
    for (const auto& slot : slots_) {
      if (slot.momentum.defined()) out["momentum/" + slot.name] = slot.momentum;
      if (slot.residual.defined()) out["residual/" + slot.name] = slot.residual;
    }
    return out;
  }

  void load_state_dict(const orchestrate::StateDict& state) override {
    at::NoGradGuard no_grad;
    for (auto& [name, tensor] : this->state_dict()) {
      const auto it = state.find(name);
      if (it == state.end())
        throw orchestrate::Error("dgc: the checkpoint has no '" + name +
                                 "' (it was saved with other [gradient_compression] settings)");
      if (it->second.numel() != tensor.numel())
        throw orchestrate::Error("dgc: the checkpoint's '" + name + "' has " + std::to_string(it->second.numel()) +
                                 " elements, the model's " + std::to_string(tensor.numel()));
      tensor.copy_(it->second.reshape({-1}));
    }
  }

 private:
  // DGC's local gradient clipping: each rank clips its own gradient at
  // clip_norm / sqrt(N), so the sum of N ranks' stays near clip_norm.
  // Kept as a 0-dim tensor: no host-device sync.
  at::Tensor local_clip_factor() const {
    if (settings_.clip_norm <= 0) return {};
    std::vector<at::Tensor> gradients;
    for (const auto& slot : slots_) gradients.push_back(slot.parameter.grad().detach());
    const auto norm = at::stack(at::_foreach_norm(gradients)).to(at::kDouble).norm();
    const double threshold = settings_.clip_norm / std::sqrt(static_cast<double>(world_size_));
    return at::clamp_max(threshold / (norm + 1e-6), 1.0).to(slot_dtype());
  }

  at::ScalarType slot_dtype() const { return slots_.front().parameter.scalar_type(); }

  // Momentum correction, accumulation, top-k and masking for one tensor.
  CompressedGradient sparsify(Slot& slot, const at::Tensor& g, double sparsity) const {
    const double m = settings_.momentum;
    at::Tensor& v = slot.residual;
    if (m == 0) {
      v.add_(g);
    } else if (settings_.nesterov) {
      slot.momentum.add_(g).mul_(m);
      v.add_(slot.momentum).add_(g);
    } else {
      slot.momentum.mul_(m).add_(g);
      v.add_(slot.momentum);
    }
    const std::int64_t k = elements_to_send(v.numel(), sparsity);
    if (k == v.numel()) {  // everything goes: no indices to send
      auto values = v.to(at::kFloat, /*non_blocking=*/false, /*copy=*/true);
      v.zero_();
      if (m != 0 && settings_.momentum_factor_masking) slot.momentum.zero_();
      return {at::Tensor(), std::move(values)};
    }
    const auto indices = std::get<1>(at::topk(v.abs(), k, 0, /*largest=*/true, /*sorted=*/false));
    auto values = v.index_select(0, indices).to(at::kFloat);
    v.index_fill_(0, indices, 0);
    if (m != 0 && settings_.momentum_factor_masking) slot.momentum.index_fill_(0, indices, 0);
    return {indices, std::move(values)};
  }

  // A tensor sent whole: plain (or Nesterov) momentum, no residual.
  CompressedGradient whole(Slot& slot, const at::Tensor& g) const {
    const double m = settings_.momentum;
    if (m == 0) return {at::Tensor(), g.to(at::kFloat, false, true)};
    slot.momentum.mul_(m).add_(g);
    const auto update = settings_.nesterov ? g + m * slot.momentum : slot.momentum.clone();
    return {at::Tensor(), update.to(at::kFloat)};
  }

  DgcSettings settings_;
  SparsitySchedule schedule_;
  std::int64_t world_size_;
  std::vector<Slot> slots_;
};

std::unique_ptr<orchestrate::GradientCompressor> make_dgc(const Params& params, const CompressionContext& context) {
  const DgcSettings settings{params.real("momentum"), params.boolean("nesterov"),
                             params.boolean("momentum_factor_masking"), params.real("clip_norm"),
                             params.boolean("compress_vectors")};
  return std::make_unique<DeepGradientCompression>(
      settings, SparsitySchedule(params.real_list("sparsity"), params.real("epochs_per_stage")), context);
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_list_param("sparsity", std::vector<double>{0.75, 0.9375, 0.984375, 0.996, 0.999},
                      "the fraction of each gradient NOT sent, one stage per epochs_per_stage epochs, the last for "
                      "the rest of training (the seed's --dgc_sparsity_strategy)"),
      real_param("epochs_per_stage", 1.0, "how long each sparsity stage lasts, in epochs").greater_than(0),
      real_param("momentum", 0.9,
                 "momentum applied here, before compression (momentum correction; the seed's --dgc_momentum); "
                 "the base optimizer must then be plain sgd")
          .at_least(0)
          .less_than(1),
      bool_param("nesterov", false, "Nesterov momentum (the seed's --dgc_momentum_type=nesterov) instead of vanilla"),
      bool_param("momentum_factor_masking", true,
                 "zero the momentum of the entries just sent, so stale momentum does not push them again"),
      real_param("clip_norm", 0.0,
                 "local gradient clipping: each rank clips its gradient norm at clip_norm / sqrt(ranks); 0: off")
          .at_least(0),
      bool_param("compress_vectors", false,
                 "also sparsify one-dimensional tensors (biases, normalization); by default they are sent whole"),
  };
  schema.rule([](const Params& p) -> std::string {
    const auto& stages = p.real_list("sparsity");
    if (stages.empty()) return "sparsity needs at least one stage, e.g. [0.999]";
    for (const double s : stages)
      if (!(s >= 0 && s < 1)) return "sparsity " + std::to_string(s) + " is outside [0, 1); 0.999 sends 0.1 %";
    if (p.boolean("nesterov") && p.real("momentum") == 0) return "nesterov needs momentum > 0";
    return "";
  });
  CompressionRules rules;
  rules.takes_over_weight_decay = true;  // added to the gradient before compression, as the reference does
  rules.base_optimizer_problem = [](const Params& own, const std::string& base) -> std::string {
    if (own.real("momentum") == 0 || base == "sgd") return "";
    return "momentum = " + std::to_string(own.real("momentum")).substr(0, 4) +
           " is applied here (momentum correction), so the base optimizer must be plain \"sgd\", not '" + base +
           "' (the seed runs DGC with --momentum=0); set [optimizer] plugin = \"sgd\", or momentum = 0 here";
  };
  registry.gradient_compressors().add(
      "dgc", "Deep Gradient Compression: top-k sparsification with local accumulation, momentum correction and masking",
      std::move(schema), make_dgc, std::move(rules));
}

}  // namespace

ORCHESTRATE_PLUGIN("dgc", "1.0.0", register_components)
