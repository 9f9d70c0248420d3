#include "engine/train/gradient_sync.h"

#include <ATen/ATen.h>

#include <chrono>
#include <iomanip>
#include <sstream>

#include "orchestrate/error.h"

namespace orchestrate {

namespace {

// A compressor's state as one flat tensor, in name order: what the ranks
// all-gather and a checkpoint keeps per rank.
at::Tensor flatten_state(const std::map<std::string, at::Tensor>& state) {
  std::vector<at::Tensor> flat;
  for (const auto& [name, tensor] : state) flat.push_back(tensor.detach().reshape({-1}));
  return flat.empty() ? at::Tensor(at::empty({0})) : at::cat(flat);
}

// Splits `flat` into tensors shaped like `like`'s; an error when the sizes
// differ (a checkpoint saved with other compression settings).
std::map<std::string, at::Tensor> unflatten_state(const at::Tensor& flat,
                                                  const std::map<std::string, at::Tensor>& like) {
  std::int64_t expected = 0;
  for (const auto& [name, tensor] : like) expected += tensor.numel();
  if (flat.numel() != expected)
    throw Error("the checkpoint's gradient-compression state has " + std::to_string(flat.numel()) +
                " values where this recipe's compressor keeps " + std::to_string(expected) +
                "; resume with the [gradient_compression] settings it was saved with");
  std::map<std::string, at::Tensor> out;
  std::int64_t at = 0;
  for (const auto& [name, tensor] : like) {
    out[name] = flat.narrow(0, at, tensor.numel()).view(tensor.sizes());
    at += tensor.numel();
  }
  return out;
}

}  // namespace

GradientSync::GradientSync(Collective* collective, const std::vector<at::Tensor>& parameters,
                           GradientCompressor* compressor, std::string compressor_name, double bucket_size_mb)
    : collective_(collective),
      parameters_(parameters),
      compressor_(compressor),
      compressor_name_(std::move(compressor_name)) {
  if (compressor_)
    exchange_ = std::make_unique<CompressedGradientExchange>(collective_, parameters_);
  else if (collective_)
    reducer_ = std::make_unique<GradientReducer>(*collective_, parameters_, bucket_size_mb);
}

std::string GradientSync::describe(double bucket_size_mb) const {
  std::ostringstream what;
  if (exchange_) {
    what << "gradients compressed by " << compressor_name_ << " and exchanged by all-gather";
  } else if (reducer_) {
    what << reducer_->bucket_count() << " gradient buckets of at most " << bucket_size_mb << " MB, " << std::fixed
         << std::setprecision(2) << reducer_->bytes_per_update() / 1048576.0 << " MB all-reduced per update";
  }
  return what.str();
}

void GradientSync::before_backward(bool last_micro_batch) {
  if (reducer_) reducer_->set_communicating(last_micro_batch);
}

void GradientSync::after_backward(StepTiming& timing, PhaseTimer& timer) {
  if (!reducer_) return;
  timing.sync_s = reducer_->finish_reduction();
  timing.bytes_sent = reducer_->bytes_per_update();
  timer.sync_ends();
}

void GradientSync::exchange_compressed(bool skipping, const CompressionStep& step, StepTiming& timing,
                                       PhaseTimer& timer) {
  if (!exchange_) return;
  if (!skipping) {
    const auto start = std::chrono::steady_clock::now();
    for (auto& p : parameters_)  // a parameter the loss did not reach has a zero gradient
      if (!p.grad().defined()) p.mutable_grad() = at::zeros_like(p);
    const auto messages = compressor_->compress(step);
    const auto cost = exchange_->exchange(messages, compressor_name_);
    timing.sync_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (collective_) timing.bytes_sent = cost.bytes_sent;
  }
  timer.sync_ends();
}

void GradientSync::gather_state() {
  if (!compressor_) return;
  const auto mine = flatten_state(compressor_->state_dict());
  if (mine.numel() == 0) return;  // a stateless compressor (the same on every rank)
  state_by_rank_ = collective_ ? collective_->all_gather(mine.to(collective_->device())) : std::vector{mine};
}

// Its own state when the job has as many ranks as the one that saved,
// otherwise the mean over the saved ranks: the residuals are linear, so the
// mean keeps what the ranks had yet to send, on average
// (gradient_compression.h's contract).
StateDict GradientSync::state_dict() const {
  StateDict out;
  for (std::size_t r = 0; r < state_by_rank_.size(); ++r) out["rank" + std::to_string(r)] = state_by_rank_[r];
  return out;
}

void GradientSync::load_state_dict(const StateDict& state) {
  state_by_rank_.clear();
  for (auto it = state.find("rank0"); it != state.end();
       it = state.find("rank" + std::to_string(state_by_rank_.size())))
    state_by_rank_.push_back(it->second);
  if (!compressor_ || state_by_rank_.empty()) return;
  const auto device = parameters_.empty() ? c10::Device(c10::kCPU) : parameters_.front().device();
  const int world = collective_ ? collective_->world_size() : 1;
  const int rank = collective_ ? collective_->rank() : 0;
  const at::Tensor chosen = static_cast<int>(state_by_rank_.size()) == world ? state_by_rank_[rank]
                                                                              : at::stack(state_by_rank_).mean(0);
  compressor_->load_state_dict(unflatten_state(chosen.to(device), compressor_->state_dict()));
}

}  // namespace orchestrate
