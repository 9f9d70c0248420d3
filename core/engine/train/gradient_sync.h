// Gradient sync, one concern of the step: how a rank's gradients become the
// job's. Training alone, nothing; in a data-parallel job, a bucketed
// all-reduce that overlaps backward; with a gradient compressor (alone too),
// the compressor's messages exchanged by all-gather. It also keeps the
// compressor's per-rank state that a checkpoint holds.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "distributed/collective.h"
#include "distributed/compressed_gradient_exchange.h"
#include "distributed/gradient_reducer.h"
#include "engine/train/phase_timer.h"
#include "orchestrate/gradient_compression.h"
#include "orchestrate/stateful.h"
#include "store/run_records.h"

namespace orchestrate {

// Its state: the compressor's, of every rank ("rank0", "rank1", ...), as
// gather_state last collected it.
class GradientSync : public Stateful {
 public:
  // `collective`: null when training alone. `compressor`: null for dense
  // gradients; named `compressor_name` in errors.
  GradientSync(Collective* collective, const std::vector<at::Tensor>& parameters, GradientCompressor* compressor,
               std::string compressor_name, double bucket_size_mb);

  // How this job syncs, for its data_parallel event.
  std::string describe(double bucket_size_mb) const;

  // Before a micro-batch's backward: only the update's last one all-reduces.
  void before_backward(bool last_micro_batch);
  // After the update's backward passes: waits for the all-reduce.
  void after_backward(StepTiming& timing, PhaseTimer& timer);
  // After the ranks agreed on the loss: the compressor's exchange, in place
  // of the all-reduce. Not done for an update that will be skipped
  // (`skipping`), so a non-finite gradient never enters the residuals. All
  // of it, compression included, is the step's sync time.
  void exchange_compressed(bool skipping, const CompressionStep& step, StepTiming& timing, PhaseTimer& timer);

  // Rank r's compressor state at index r: every rank calls this together
  // before a checkpoint (an all-gather).
  void gather_state();
  StateDict state_dict() const override;
  // Continues from the saved state (see the .cpp).
  void load_state_dict(const StateDict& state) override;

 private:
  Collective* const collective_;
  std::vector<at::Tensor> parameters_;
  GradientCompressor* const compressor_;
  const std::string compressor_name_;
  std::unique_ptr<GradientReducer> reducer_;              // dense all-reduce, without a compressor
  std::unique_ptr<CompressedGradientExchange> exchange_;  // with a compressor
  std::vector<at::Tensor> state_by_rank_;
};

}  // namespace orchestrate
