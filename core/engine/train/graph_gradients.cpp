#include "engine/train/graph_gradients.h"

#include <ATen/ATen.h>

#include <utility>

namespace orchestrate {

GraphGradients::GraphGradients(std::vector<at::Tensor> parameters, std::int64_t micro_batches)
    : parameters_(std::move(parameters)), micro_batches_(micro_batches) {}

void GraphGradients::begin(bool clear) {
  so_far_.assign(parameters_.size(), at::Tensor());
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    auto& grad = parameters_[i].mutable_grad();
    // A parameter still holding the graph's own buffer holds nothing of its
    // own: the replay is about to overwrite it.
    const bool own = grad.defined() && !(i < graph_.size() && graph_[i].defined() && grad.is_same(graph_[i]));
    if (own) so_far_[i] = grad;
    if (clear) grad.reset();
  }
}

void GraphGradients::adopt_captured() {
  graph_.clear();
  for (const auto& parameter : parameters_) graph_.push_back(parameter.grad());
  accumulators_.assign(parameters_.size(), at::Tensor());
}

void GraphGradients::restore() {
  for (std::size_t i = 0; i < parameters_.size() && i < so_far_.size(); ++i) parameters_[i].mutable_grad() = so_far_[i];
  so_far_.clear();
}

void GraphGradients::finish() {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> sums, sum_sources, copies, copy_sources;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    const at::Tensor& written = graph_[i];
    auto& grad = parameters_[i].mutable_grad();
    if (!written.defined()) {
      grad = so_far_[i];
      continue;
    }
    if (so_far_[i].defined()) {
      sums.push_back(so_far_[i]);
      sum_sources.push_back(written);
      grad = so_far_[i];
    } else if (micro_batches_ == 1) {
      grad = written;
    } else {
      if (!accumulators_[i].defined()) accumulators_[i] = at::empty_like(written);
      copies.push_back(accumulators_[i]);
      copy_sources.push_back(written);
      grad = accumulators_[i];
    }
  }
  // One launch each, whatever the parameter count.
  if (!sums.empty()) at::_foreach_add_(sums, sum_sources);
  if (!copies.empty()) at::_foreach_copy_(copies, copy_sources);
  so_far_.clear();
}

void GraphGradients::release() {
  for (std::size_t i = 0; i < parameters_.size() && i < graph_.size(); ++i) {
    auto& grad = parameters_[i].mutable_grad();
    if (grad.defined() && graph_[i].defined() && grad.is_same(graph_[i])) grad.reset();
  }
  graph_.clear();
  accumulators_.clear();
  so_far_.clear();
}

}  // namespace orchestrate
