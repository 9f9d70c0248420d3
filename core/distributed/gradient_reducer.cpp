#include "distributed/gradient_reducer.h"

#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <ATen/ops/flatten_dense_tensors.h>
#include <ATen/ops/unflatten_dense_tensors.h>
#include <ATen/ops/zeros_like.h>

#include <chrono>
#include <mutex>

#include "orchestrate/error.h"

namespace orchestrate {

struct GradientReducer::State {
  struct Bucket {
    std::vector<std::size_t> members;
    std::size_t ready = 0;
    at::Tensor buffer;
    PendingCollective pending;
  };

  Collective* collective = nullptr;
  std::vector<at::Tensor> parameters;
  std::vector<std::size_t> bucket_of;
  std::vector<bool> is_ready;
  std::vector<Bucket> buckets;
  std::size_t next_to_start = 0;
  bool communicating = true;
  std::mutex mutex;

  // Called from the autograd engine once a parameter's gradient is final.
  void mark_ready(std::size_t index) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!communicating || is_ready[index]) return;
    is_ready[index] = true;
    ++buckets[bucket_of[index]].ready;
    // In order only: rank A must not start bucket 3 while rank B starts bucket 2.
    while (next_to_start < buckets.size() && buckets[next_to_start].ready == buckets[next_to_start].members.size())
      start(next_to_start++);
  }

  void start(std::size_t b) {
    Bucket& bucket = buckets[b];
    std::vector<at::Tensor> grads;
    grads.reserve(bucket.members.size());
    for (const std::size_t i : bucket.members) {
      const auto& grad = parameters[i].grad();
      grads.push_back(grad.defined() ? grad : at::zeros_like(parameters[i]));
    }
    // Divided before the sum, as DDP does: the sum of N fp16 gradients may
    // overflow where their mean does not.
    bucket.buffer = at::flatten_dense_tensors(grads).div_(collective->world_size());
    bucket.pending = collective->all_reduce_sum_async(bucket.buffer);
  }
};

namespace {

class GradientReadyHook final : public torch::autograd::PostAccumulateGradHook {
 public:
  GradientReadyHook(std::weak_ptr<GradientReducer::State> state, std::size_t index)
      : state_(std::move(state)), index_(index) {}
  void operator()(const torch::autograd::Variable&) override {
    if (auto state = state_.lock()) state->mark_ready(index_);
  }

 private:
  std::weak_ptr<GradientReducer::State> state_;
  std::size_t index_;
};

}  // namespace

std::vector<std::vector<std::size_t>> assign_buckets(const std::vector<at::Tensor>& parameters,
                                                     std::int64_t bucket_bytes) {
  std::vector<std::vector<std::size_t>> buckets;
  std::int64_t filled = 0;
  for (std::size_t n = parameters.size(); n-- > 0;) {
    const auto& p = parameters[n];
    const std::int64_t bytes = p.numel() * static_cast<std::int64_t>(p.element_size());
    const bool same_kind = !buckets.empty() && parameters[buckets.back().front()].scalar_type() == p.scalar_type() &&
                           parameters[buckets.back().front()].device() == p.device();
    if (buckets.empty() || !same_kind || (filled > 0 && filled + bytes > bucket_bytes)) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(n);
    filled += bytes;
  }
  return buckets;
}

GradientReducer::GradientReducer(Collective& collective, const std::vector<at::Tensor>& parameters,
                                 double bucket_size_mb)
    : state_(std::make_shared<State>()) {
  state_->collective = &collective;
  state_->parameters = parameters;
  state_->bucket_of.resize(parameters.size());
  state_->is_ready.assign(parameters.size(), false);
  const auto bucket_bytes = static_cast<std::int64_t>(bucket_size_mb * 1024 * 1024);
  for (auto& members : assign_buckets(parameters, bucket_bytes)) {
    for (const std::size_t i : members) state_->bucket_of[i] = state_->buckets.size();
    state_->buckets.push_back({std::move(members), 0, {}, {}});
  }
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    if (!parameters[i].requires_grad())
      throw Error("GradientReducer: parameter " + std::to_string(i) + " does not require a gradient (a bug: pass "
                  "only trainable parameters)");
    torch::autograd::impl::set_post_acc_grad_hooks(parameters[i],
                                                   std::make_unique<GradientReadyHook>(state_, i));
  }
}

GradientReducer::~GradientReducer() {
  for (const auto& p : state_->parameters) torch::autograd::impl::set_post_acc_grad_hooks(p, nullptr);
}

void GradientReducer::set_communicating(bool communicating) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->communicating = communicating;
}

double GradientReducer::finish_reduction() {
  const auto begin = std::chrono::steady_clock::now();
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  while (s.next_to_start < s.buckets.size()) s.start(s.next_to_start++);
  for (auto& bucket : s.buckets) {
    bucket.pending.wait();
    std::vector<at::Tensor> members;
    for (const std::size_t i : bucket.members) members.push_back(s.parameters[i]);
    const auto means = at::unflatten_dense_tensors(bucket.buffer, members);
    for (std::size_t k = 0; k < members.size(); ++k) {
      auto& grad = members[k].mutable_grad();
      if (grad.defined())
        copy_piece(grad, means[k]);
      else
        grad = means[k].clone();
    }
    bucket.buffer = at::Tensor();
    bucket.ready = 0;
  }
  s.next_to_start = 0;
  s.is_ready.assign(s.is_ready.size(), false);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

std::size_t GradientReducer::bucket_count() const { return state_->buckets.size(); }

std::int64_t GradientReducer::bytes_per_update() const {
  std::int64_t bytes = 0;
  for (const auto& p : state_->parameters) bytes += p.numel() * static_cast<std::int64_t>(p.element_size());
  return bytes;
}

}  // namespace orchestrate
