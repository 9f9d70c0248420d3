// Gradient compression: the `[gradient_compression]` table. A compressor
// decides which part of each rank's local gradient is sent to the other ranks
// (Deep Gradient Compression's top-k), and keeps what it does not send for
// later updates.
//
// The host calls compress() once per update, after the local micro-batches
// have been accumulated and before the optimizer wrappers. It then exchanges
// every rank's output by all-gather, sums the contributions of all ranks
// into each parameter's gradient and divides by the world size, so the base
// optimizer steps with the mean of what the ranks sent. Alone (one process)
// the same happens with a world of one.
//
// The contract (checked by the conformance test):
//   - compress() returns one entry per context parameter, in context order
//     (groups in order, parameters in order within a group);
//   - an entry's `values` are float32, one-dimensional, on the parameter's
//     device; `indices`, when defined, are int64 or int32 positions in the
//     flattened parameter, as many as the values, each at most once;
//     undefined `indices` mean `values` is the whole flattened gradient;
//   - for a given update every rank returns the same number of values per
//     entry (the exchange is an all-gather of fixed-size messages);
//   - state_dict() and load_state_dict() (orchestrate/stateful.h) round-trip
//     the state a resumed run needs: a rank's residuals, by name. State
//     tensors must be "linear": when a job resumes on a
//     different number of ranks, the host gives every rank the mean of the
//     saved ranks' state tensors of the same name.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "orchestrate/api.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/stateful.h"

namespace orchestrate {

// CompressionRules, declared at registration, are in registry.h.

// What a compressor factory is given. Grows only at the end.
struct CompressionContext {
  // As the host formed them, true weight decay included; the compressor reads
  // each parameter's .grad() and owns the tensors' order.
  std::vector<ParameterGroup> groups;
  std::int64_t world_size = 1;
  std::int64_t updates_per_epoch = 1;
};

// One update as a compressor sees it.
struct CompressionStep {
  std::int64_t update = 0;  // 0-based index of this update
  double epoch = 0.0;       // epochs completed before this update, fractional: update / updates_per_epoch
  // Scalars to log, kept on the device (0-dim tensors), as for wrappers.
  std::map<std::string, at::Tensor>& metrics;
};

// One parameter's message to the other ranks.
struct CompressedGradient {
  at::Tensor indices;  // undefined: `values` is the whole flattened gradient
  at::Tensor values;
};

class ORCHESTRATE_API GradientCompressor : public Stateful {
 public:
  ~GradientCompressor() override;
  // Reads each parameter's local gradient (the mean over this rank's
  // micro-batches; zeros where a parameter got none) and chooses what to send.
  virtual std::vector<CompressedGradient> compress(const CompressionStep& step) = 0;
};

}  // namespace orchestrate
