#include "distributed/compressed_gradient_exchange.h"

#include <ATen/ATen.h>

#include <chrono>
#include <utility>

#include "orchestrate/error.h"

namespace orchestrate {

namespace {

void check_message(const CompressedGradient& message, const at::Tensor& parameter, std::size_t index,
                   const std::string& compressor) {
  const std::string where = "[gradient_compression] " + compressor + ": parameter " + std::to_string(index);
  if (!message.values.defined() || message.values.dim() != 1 || message.values.scalar_type() != at::kFloat)
    throw Error(where + ": values must be a one-dimensional float32 tensor (a plugin bug)");
  if (!message.indices.defined()) {
    if (message.values.numel() != parameter.numel())
      throw Error(where + ": " + std::to_string(message.values.numel()) + " values without indices for " +
                  std::to_string(parameter.numel()) + " elements (a plugin bug)");
    return;
  }
  const auto type = message.indices.scalar_type();
  if (message.indices.dim() != 1 || (type != at::kLong && type != at::kInt) ||
      message.indices.numel() != message.values.numel())
    throw Error(where + ": indices must be one int32 or int64 per value (a plugin bug)");
}

}  // namespace

CompressedGradientExchange::CompressedGradientExchange(Collective* collective, std::vector<at::Tensor> parameters)
    : collective_(collective), parameters_(std::move(parameters)) {}

ExchangeCost CompressedGradientExchange::exchange(const std::vector<CompressedGradient>& messages,
                                                  const std::string& compressor) {
  if (messages.size() != parameters_.size())
    throw Error("[gradient_compression] " + compressor + ": " + std::to_string(messages.size()) + " messages for " +
                std::to_string(parameters_.size()) + " parameters (a plugin bug)");
  at::NoGradGuard no_grad;
  // One message per rank: the values, then the int32 indices reinterpreted
  // as float32 bits, so a single all-gather carries both (one round trip
  // instead of two; the bits are never used as numbers).
  std::vector<at::Tensor> values, indices;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    check_message(messages[i], parameters_[i], i, compressor);
    values.push_back(messages[i].values);
    if (messages[i].indices.defined()) indices.push_back(messages[i].indices.to(at::kInt).view(at::kFloat));
  }
  const auto sent_values = at::cat(values);
  const auto message = indices.empty() ? sent_values : at::cat({sent_values, at::cat(indices)});
  ExchangeCost cost;
  cost.bytes_sent = message.numel() * 4;

  std::vector<at::Tensor> gathered{message};
  std::int64_t world = 1;
  if (collective_) {
    const auto start = std::chrono::steady_clock::now();
    gathered = collective_->all_gather(message);
    cost.wait_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    world = collective_->world_size();
  }
  const auto all = at::stack(gathered);  // [world, message length]
  // Every rank's indices back to positions, once for all parameters.
  const std::int64_t index_count = message.numel() - sent_values.numel();
  const auto all_positions =
      all.narrow(1, sent_values.numel(), index_count).contiguous().view(at::kInt).to(at::kLong);
  std::int64_t value_at = 0, index_at = 0;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    auto& parameter = parameters_[i];
    const std::int64_t count = messages[i].values.numel();
    const auto sent = all.narrow(1, value_at, count);
    value_at += count;
    at::Tensor sum;
    if (!messages[i].indices.defined()) {
      sum = sent.sum(0);
    } else {
      const auto positions = all_positions.narrow(1, index_at, count).reshape({-1});
      index_at += count;
      sum = at::zeros({parameter.numel()}, sent.options()).index_add_(0, positions, sent.reshape({-1}));
    }
    const auto mean = (sum / static_cast<double>(world)).view(parameter.sizes()).to(parameter.scalar_type());
    if (parameter.grad().defined()) parameter.mutable_grad().copy_(mean);
    else parameter.mutable_grad() = mean.contiguous(parameter.suggest_memory_format());
  }
  return cost;
}

}  // namespace orchestrate
