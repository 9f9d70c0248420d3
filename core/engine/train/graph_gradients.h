// How the gradients a CUDA graph writes reach the parameters
// (cuda_graph_step.h). Backward inside the graph writes each gradient into
// the same buffer at every replay, as if it started from none. What the
// eager step would hold after that micro-batch is then:
//   - one micro-batch per update: the graph's buffer itself, attached to
//     the parameter (no copy);
//   - the first of several: a copy into an accumulator of the step's own
//     (the next replay overwrites the graph's buffer);
//   - a later one, or the first after a resume that stopped mid-update: the
//     gradients accumulated so far, plus the graph's, in place.
// The sums are the eager step's to the bit: each is the same float add
// that backward's accumulation does, in the same order.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace orchestrate {

class GraphGradients {
 public:
  // `parameters`: the optimizer's; `micro_batches`: per update.
  GraphGradients(std::vector<at::Tensor> parameters, std::int64_t micro_batches);

  // Before a replay, or before the capture (`clear`: the parameters are left
  // without gradients, so the captured backward makes its own): what the
  // parameters hold so far.
  void begin(bool clear);
  // After the capture: the buffers backward made are the graph's.
  void adopt_captured();
  // After a capture that failed: the parameters hold what they held at begin().
  void restore();
  // After a replay: the graph's gradients into the parameters, as above.
  void finish();
  // The graph is gone: its buffers are released, and no parameter keeps one.
  void release();

  bool captured() const { return !graph_.empty(); }

 private:
  const std::vector<at::Tensor> parameters_;
  const std::int64_t micro_batches_;
  std::vector<at::Tensor> graph_;         // in parameters_' order; undefined where backward gave none
  std::vector<at::Tensor> accumulators_;  // several micro-batches: the update's sums, made on first use
  std::vector<at::Tensor> so_far_;        // what each parameter held at begin()
};

}  // namespace orchestrate
