// Averages gradients across the ranks of a data-parallel job in size-bounded
// buckets (the MindSpore seed's all-reduce fusion groups, DDP's buckets).
// Each bucket's all-reduce starts from an autograd hook as soon as the last of
// its gradients is accumulated, so communication overlaps the rest of the
// backward pass; buckets hold parameters in reverse registration order, the
// order backward produces their gradients.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "distributed/collective.h"

namespace orchestrate {

class GradientReducer {
 public:
  // `parameters`: the trainable ones (requires_grad), in the model's order.
  GradientReducer(Collective& collective, const std::vector<at::Tensor>& parameters, double bucket_size_mb);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Whether the coming backward pass communicates: true for the micro-batch
  // that completes an update, false for those that only accumulate locally
  // (so a job with batch_gradients = K communicates once per K micro-batches).
  void set_communicating(bool communicating);

  // After the communicating backward pass: starts the buckets no hook started
  // (a parameter that got no gradient contributes zeros), waits for every
  // bucket, and writes the mean gradient over the ranks into each .grad().
  // Returns the seconds this thread waited. Buckets are started in one fixed
  // order on every rank, as the process group requires.
  double finish_reduction();

  std::size_t bucket_count() const;
  // Bytes all-reduced per update (the payload, all buckets).
  std::int64_t bytes_per_update() const;

  struct State;  // shared with the autograd hooks, which may outlive this object

 private:
  std::shared_ptr<State> state_;
};

// Parameter indices per bucket: reverse order, a new bucket when adding the
// next parameter would pass `bucket_bytes` or change its dtype or device. A
// parameter larger than a bucket gets one to itself.
std::vector<std::vector<std::size_t>> assign_buckets(const std::vector<at::Tensor>& parameters,
                                                     std::int64_t bucket_bytes);

}  // namespace orchestrate
