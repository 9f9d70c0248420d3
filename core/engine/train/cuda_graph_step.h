// CUDA graph capture, one concern of the step: a micro-batch's forward, loss
// and backward recorded once as a CUDA graph and replayed at every later
// update, so the GPU runs them without the host launching each kernel. A
// small model's eager step is launch-bound (the Fashion-MNIST ConvNet on an
// H200: 3.1 ms a step at 0.2 % MFU).
//
// What stays eager: the optimizer step, its wrappers and the loss scaler's
// unscale and update. They are fused already (a few launches an update) and
// read the learning rate from the host each update; the skip on inf/nan
// gradients no longer reads the host where the optimizer skips on the
// device (update_step.h), which capturing them would build on.
//
// [run] cuda_graph = "auto" captures when the run allows it: CUDA, one
// process, no gradient compressor, no
// dimension-reduce training, a model without auxiliary classifiers, and
// batches of one shape. Otherwise, or when a capture fails, the eager step
// runs, and one event of the run says why ("cuda_graph"). The default is
// "off" until the capture has been measured on a GPU (gpu_checks graph).
//
// The first kEagerUpdatesBeforeCapture (settings.h) updates of a process run eagerly:
// cuDNN's autotuning picks its algorithms, the caching allocator fills and
// lazy set-up happens outside the graph, as torch.cuda.graphs asks; the
// last of them on the capture's own stream. A capture that fails is undone
// (the stream, the allocators' pools, the random generator's capture mode)
// before the eager step goes on.
//
// The gradients backward writes belong to the graph; GraphGradients makes
// them the parameters' as the eager step would, attached (one micro-batch an
// update) or summed into the update's own (several: gradient accumulation).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/Stream.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/recipe/settings.h"
#include "engine/train/graph_gradients.h"
#include "store/run_recorder.h"

namespace at::cuda {
struct CUDAGraph;
}
namespace c10::cuda {
class CUDAStream;
}

namespace orchestrate {

class CudaGraphStep {
 public:
  // A micro-batch's results, detached: its loss and the logits the metrics count.
  struct Result {
    at::Tensor loss;
    at::Tensor logits;
  };
  // Forward, loss and backward of one micro-batch; sets `not_capturable`
  // when what it ran cannot be replayed (one line, naming the part).
  using Body = std::function<Result(const at::Tensor& images, const at::Tensor& labels, std::string& not_capturable)>;

  // `parameters`: the optimizer's, whose gradients backward writes, over
  // `micro_batches` per update. `run_blocker`: why this run cannot be
  // captured at all, or "".
  CudaGraphStep(CudaGraphMode mode, const c10::Device& device, std::vector<at::Tensor> parameters,
                std::int64_t micro_batches, std::string run_blocker, const RunRecorder& recorder);
  ~CudaGraphStep();
  CudaGraphStep(const CudaGraphStep&) = delete;
  CudaGraphStep& operator=(const CudaGraphStep&) = delete;

  // Runs `body` on this micro-batch: eagerly, or by replaying the graph,
  // captured at the first micro-batch after the eager ones. `update`: the
  // 1-based update, for the events.
  Result run(const at::Tensor& images, const at::Tensor& labels, std::int64_t update, const Body& body);

  bool replaying() const { return graph_ != nullptr; }

 private:
  Result capture(const at::Tensor& images, const at::Tensor& labels, std::int64_t update, const Body& body);
  Result on_capture_stream(const at::Tensor& images, const at::Tensor& labels, const Body& body,
                           std::string& not_capturable);
  Result replay(const at::Tensor& images, const at::Tensor& labels);
  bool fits(const at::Tensor& images, const at::Tensor& labels) const;
  // Ends graph capture for good, the eager step from now on; `why` is the event's text.
  void stop_capturing(const std::string& why);

  const RunRecorder recorder_;
  const std::int64_t micro_batches_;
  GraphGradients gradients_;
  bool capturing_allowed_ = false;
  std::int64_t eager_runs_ = 0;  // micro-batches
  // The CUDA stream the capture and the eager update before it run on.
  c10::cuda::CUDAStream capture_stream();
  c10::DeviceIndex device_index_ = 0;
  std::optional<c10::Stream> capture_stream_;
  std::unique_ptr<at::cuda::CUDAGraph> graph_;
  at::Tensor static_images_, static_labels_;  // the graph reads its batch from these
  Result static_result_;                      // and writes its results here
};

}  // namespace orchestrate
