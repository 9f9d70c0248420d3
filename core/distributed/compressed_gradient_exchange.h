// Averages compressed gradients across the ranks of a data-parallel job:
// every rank's (indices, values) messages are all-gathered, summed into each
// parameter's gradient and divided by the world size. A job without a
// collective (one process) goes through the same arithmetic with a world of
// one, so a recipe trains the same way with and without --nproc 1.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "distributed/collective.h"
#include "orchestrate/gradient_compression.h"

namespace orchestrate {

struct ExchangeCost {
  double wait_s = 0;           // seconds this thread waited in the collective
  std::int64_t bytes_sent = 0;  // this rank's payload: values and indices, 4 bytes each
};

class CompressedGradientExchange {
 public:
  // `collective`: null when training alone. `parameters`: the compressor's
  // parameters, in its order.
  CompressedGradientExchange(Collective* collective, std::vector<at::Tensor> parameters);

  // Checks `messages` against the contract (gradient_compression.h), then
  // writes the mean over ranks of what they sent into each parameter's .grad().
  ExchangeCost exchange(const std::vector<CompressedGradient>& messages, const std::string& compressor);

 private:
  Collective* collective_;
  std::vector<at::Tensor> parameters_;
};

}  // namespace orchestrate
