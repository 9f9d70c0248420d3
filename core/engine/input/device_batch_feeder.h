// Moves a pipeline's batches to the training device: the one place where a
// batch crosses from host to device. uint8 crosses, a quarter of float32,
// and the preprocessing's finish_batch makes it float there; a pipeline
// that finishes its batches itself (CPU training) is passed through.
//
// On CUDA the copy of a batch runs non-blocking on a side stream and is
// recorded with an event that the compute stream waits on (on the GPU, the
// host never blocks), so the copy overlaps the previous step's compute; as
// soon as a batch is handed out, the next one, when the pipeline has it
// ready, starts its copy. On CPU a batch is handed out as the pipeline made
// it (the copy is a no-op). The same code runs on both: the stream and event
// calls are c10's device-generic ones, taken only when the device is CUDA.
//
// A batch's host buffers go back to the pipeline's pool only once nothing
// reads them: on CUDA after the copy's event completed, and on any device
// when no tensor but the feeder's own still shares their memory (on CPU the
// step may keep a view of the batch it was handed).
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Event.h>
#include <c10/core/Stream.h>

#include <deque>
#include <exception>
#include <optional>

#include "engine/input/batch_feeder.h"
#include "engine/input/batch_pipeline.h"

namespace orchestrate {

class DeviceBatchFeeder : public BatchFeeder {
 public:
  DeviceBatchFeeder(BatchPipeline& pipeline, c10::Device device);
  DeviceBatchFeeder(const DeviceBatchFeeder&) = delete;
  DeviceBatchFeeder& operator=(const DeviceBatchFeeder&) = delete;

  // The next batch on the device, finished (finish_batch's images, int64
  // labels), usable at once by work queued on the current stream; nullopt at the end.
  // Rethrows the pipeline's error at the batch it belongs to.
  std::optional<Batch> next() override;

 private:
  struct Copy {
    Batch host;
    Batch device;
    std::optional<c10::Event> done;  // CUDA: recorded on the copy stream after the copy
  };
  Copy start_copy(Batch host);
  void stage_next_if_ready();
  void give_back_unused_buffers();

  BatchPipeline& pipeline_;
  const c10::Device device_;
  std::optional<c10::Stream> copy_stream_;  // CUDA only
  std::optional<Copy> staged_;              // the next batch, its copy under way
  std::exception_ptr staged_error_;         // the next batch's error, thrown when it is asked for
  std::deque<Copy> handed_out_;             // host buffers of handed-out batches, oldest first
};

}  // namespace orchestrate
