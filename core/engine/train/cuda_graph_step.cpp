#include "engine/train/cuda_graph_step.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/CachingHostAllocator.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <exception>
#include <mutex>
#include <utility>

#include "checkpoint/safetensors_header.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace {

// Autocast's cache of weights cast to fp16 or bf16 would keep tensors made
// during the capture past it; torch.cuda.make_graphed_callables turns it off too.
class AutocastCacheOff {
 public:
  AutocastCacheOff() : was_(at::autocast::is_autocast_cache_enabled()) {
    at::autocast::set_autocast_cache_enabled(false);
  }
  ~AutocastCacheOff() { at::autocast::set_autocast_cache_enabled(was_); }
  AutocastCacheOff(const AutocastCacheOff&) = delete;
  AutocastCacheOff& operator=(const AutocastCacheOff&) = delete;

 private:
  const bool was_;
};

// `waiting` goes on once the work queued on `done` so far has run.
void wait_for(const c10::cuda::CUDAStream& waiting, const c10::cuda::CUDAStream& done) {
  at::cuda::CUDAEvent event;
  event.record(done);
  event.block(waiting);
}

c10::cuda::CUDAStream as_cuda(const c10::Stream& stream) {
  return c10::cuda::CUDAStream(c10::cuda::CUDAStream::UNCHECKED, stream);
}

// cudaGetLastError clears only its caller's error. A cuBLAS or cuDNN call
// that failed in a broken capture during backward returns its own status
// and may leave its launch's error on autograd's device thread, where the
// eager backward's first launch check would throw it. A tiny backward
// there meets it (and clears it) instead.
void clear_autograd_thread_error(c10::DeviceIndex device) {
  try {
    const at::AutoGradMode grad(true);
    auto probe = at::ones({1}, at::TensorOptions().device(c10::Device(c10::kCUDA, device))).requires_grad_();
    probe.mul(2).sum().backward();
  } catch (const std::exception&) {
  }
}

// Puts back what a capture that did not end leaves behind, so the eager
// step can go on. capture_begin put the device's default random generator
// in capture mode and opened pools in the device and host allocators; only
// a capture_end that succeeds would close them, and a generator left
// capturing fails the next random op (dropout) of the eager step.
void undo_failed_capture(const c10::cuda::CUDAStream& stream, c10::DeviceIndex device, c10::MempoolId_t pool,
                         at::Generator& generator, const at::Generator& generator_before) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream.stream(), &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
    cudaGraph_t broken = nullptr;
    cudaStreamEndCapture(stream.stream(), &broken);
    if (broken) cudaGraphDestroy(broken);
  }
  {
    const std::lock_guard<std::mutex> lock(generator.mutex());
    generator.graphsafe_set_state(generator_before);
  }
  // Each may have been done by capture_end before it failed, or not be
  // implemented by this LibTorch: what is left is then a pool of idle blocks.
  try {
    c10::cuda::CUDACachingAllocator::endAllocateToPool(device, pool);
  } catch (const std::exception&) {
  }
  try {
    c10::cuda::CUDACachingAllocator::releasePool(device, pool);
  } catch (const std::exception&) {
  }
  try {
    at::getHostAllocator(at::kCUDA)->end_allocate_to_pool(pool);
  } catch (const std::exception&) {
  }
  try {
    at::getHostAllocator(at::kCUDA)->release_pool(pool);
  } catch (const std::exception&) {
  }
  (void)cudaGetLastError();  // the failed call's error is the event's, not the next kernel's
  clear_autograd_thread_error(device);
}

}  // namespace

CudaGraphStep::CudaGraphStep(CudaGraphMode mode, const c10::Device& device, std::vector<at::Tensor> parameters,
                             std::int64_t micro_batches, std::string run_blocker, const RunRecorder& recorder)
    : recorder_(recorder), micro_batches_(micro_batches), gradients_(std::move(parameters), micro_batches) {
  // On the CPU there are no kernel launches to save: nothing to say either.
  if (mode == CudaGraphMode::off || !device.is_cuda()) return;
  if (!run_blocker.empty()) {
    recorder_.event("cuda_graph", "the eager step runs: " + run_blocker + " (set [run] cuda_graph = \"off\" to "
                                  "silence this)");
    return;
  }
  capturing_allowed_ = true;
  device_index_ = device.index();
}

// Taken from the pool when first needed, so that a run whose eager updates
// rule capture out never asks CUDA for it.
c10::cuda::CUDAStream CudaGraphStep::capture_stream() {
  if (!capture_stream_) capture_stream_ = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device_index_);
  return as_cuda(*capture_stream_);
}

CudaGraphStep::~CudaGraphStep() = default;

CudaGraphStep::Result CudaGraphStep::run(const at::Tensor& images, const at::Tensor& labels, std::int64_t update,
                                         const Body& body) {
  if (graph_) {
    if (fits(images, labels)) return replay(images, labels);
    stop_capturing("update " + std::to_string(update) + "'s batch is " + shape_text(images.sizes()) +
                   ", the captured one " + shape_text(static_images_.sizes()) + ": the eager step runs from here");
  }
  if (capturing_allowed_ && eager_runs_ >= kEagerUpdatesBeforeCapture * micro_batches_)
    return capture(images, labels, update, body);
  std::string not_capturable;
  Result result = capturing_allowed_ && eager_runs_ >= (kEagerUpdatesBeforeCapture - 1) * micro_batches_
                      ? on_capture_stream(images, labels, body, not_capturable)
                      : body(images, labels, not_capturable);
  ++eager_runs_;
  if (capturing_allowed_ && !not_capturable.empty())
    stop_capturing("the eager step runs: " + not_capturable);
  return result;
}

// The last eager update before the capture runs on the capture's stream, as
// torch.cuda.graphs asks: what LibTorch sets up lazily for each stream (a
// cuBLAS workspace) is then made outside the graph, not in its pool.
CudaGraphStep::Result CudaGraphStep::on_capture_stream(const at::Tensor& images, const at::Tensor& labels,
                                                       const Body& body, std::string& not_capturable) {
  const c10::cuda::CUDAStream side = capture_stream();
  const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(side.device_index());
  wait_for(side, current);
  Result result;
  {
    const c10::cuda::CUDAStreamGuard on_side(side);
    result = body(images, labels, not_capturable);
  }
  wait_for(current, side);
  return result;
}

bool CudaGraphStep::fits(const at::Tensor& images, const at::Tensor& labels) const {
  return images.sizes() == static_images_.sizes() && images.strides() == static_images_.strides() &&
         images.scalar_type() == static_images_.scalar_type() && labels.sizes() == static_labels_.sizes() &&
         labels.scalar_type() == static_labels_.scalar_type();
}

CudaGraphStep::Result CudaGraphStep::replay(const at::Tensor& images, const at::Tensor& labels) {
  static_images_.copy_(images);
  static_labels_.copy_(labels);
  gradients_.begin(/*clear=*/false);
  graph_->replay();
  gradients_.finish();
  // The loss is kept until the next log point; the logits are read at once.
  return {static_result_.loss.clone(), static_result_.logits};
}

CudaGraphStep::Result CudaGraphStep::capture(const at::Tensor& images, const at::Tensor& labels,
                                             std::int64_t update, const Body& body) {
  const c10::DeviceIndex device = images.device().index();
  static_images_ = at::empty_like(images);
  static_images_.copy_(images);
  static_labels_ = labels.clone();
  // Backward must make the gradients inside the graph, so that they are its memory.
  gradients_.begin(/*clear=*/true);
  // The eager steps' cached blocks go back to the device: the graph's pool
  // takes their place instead of adding to them.
  c10::cuda::device_synchronize();
  c10::cuda::CUDACachingAllocator::emptyCache();
  const auto pool = at::cuda::graph_pool_handle();
  auto graph = std::make_unique<at::cuda::CUDAGraph>();
  const c10::cuda::CUDAStream stream = capture_stream();
  at::Generator generator = at::cuda::detail::getDefaultCUDAGenerator(device);
  const at::Generator generator_before = [&] {
    const std::lock_guard<std::mutex> lock(generator.mutex());
    return generator.clone();
  }();
  std::string not_capturable;
  std::string failure;
  {
    const c10::cuda::CUDAStreamGuard on_capture_stream(stream);
    const AutocastCacheOff no_cast_cache;
    try {
      // Thread-local: the input pipeline's threads may call CUDA meanwhile.
      graph->capture_begin(pool, cudaStreamCaptureModeThreadLocal);
      static_result_ = body(static_images_, static_labels_, not_capturable);
      graph->capture_end();
    } catch (const std::exception& error) {
      failure = exception_reason(error);
    }
    if (!failure.empty()) {
      // By hand: the torch object only cleans up a capture that ended.
      undo_failed_capture(stream, device, pool, generator, generator_before);
      graph.release();  // NOLINT: its destructor would release the pool a second time
    }
  }
  // What capture_begin queued on the capture stream (the generator's
  // offsets) comes before the first replay, which runs on this one.
  wait_for(c10::cuda::getCurrentCUDAStream(device), stream);
  if (failure.empty() && not_capturable.empty()) {
    graph_ = std::move(graph);
    gradients_.adopt_captured();
    recorder_.event("cuda_graph", "forward, loss and backward captured as a CUDA graph at update " +
                                      std::to_string(update) + ", replayed from then on (images " +
                                      shape_text(images.sizes()) + ")");
    // The capture ran nothing: this micro-batch is the graph's first replay.
    graph_->replay();
    gradients_.finish();
    return {static_result_.loss.clone(), static_result_.logits};
  }
  graph_.reset();
  stop_capturing("the eager step runs: capturing update " + std::to_string(update) + " failed: " +
                 (failure.empty() ? not_capturable : failure));
  // Nothing of this micro-batch ran: it runs eagerly now, from the
  // gradients the update had so far.
  gradients_.restore();
  std::string ignored;
  return body(images, labels, ignored);
}

void CudaGraphStep::stop_capturing(const std::string& why) {
  capturing_allowed_ = false;
  if (graph_) {
    // Gradients summed so far in the update stay; the graph's own buffers go.
    gradients_.release();
    graph_.reset();
  }
  static_images_ = static_labels_ = at::Tensor();
  static_result_ = {};
  recorder_.event("cuda_graph", why);
}

}  // namespace orchestrate
