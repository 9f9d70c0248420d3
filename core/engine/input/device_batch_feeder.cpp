#include "engine/input/device_batch_feeder.h"

#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <utility>

#include "engine/input/sole_owner.h"

namespace orchestrate {

namespace {

// True when no tensor but `batch`'s own refers to its memory (on CPU the
// batch handed out is the same tensor).
bool only_owner(const Batch& batch) { return sole_owner(batch.images) && sole_owner(batch.labels); }

}  // namespace

DeviceBatchFeeder::DeviceBatchFeeder(BatchPipeline& pipeline, c10::Device device)
    : pipeline_(pipeline), device_(device) {
  // One stream from the device's pool for the whole run, apart from the
  // compute stream (c10::cuda::getStreamFromPool on CUDA).
  if (device_.is_cuda())
    copy_stream_ = c10::impl::VirtualGuardImpl(device_.type()).getStreamFromGlobalPool(device_);
}

DeviceBatchFeeder::Copy DeviceBatchFeeder::start_copy(Batch host) {
  Copy copy;
  if (!copy_stream_) {
    copy.device = {host.images.to(device_), host.labels.to(device_)};  // CPU: the same tensors
  } else {
    const c10::StreamGuard on_copy_stream(*copy_stream_);
    copy.device = {host.images.to(device_, /*non_blocking=*/true), host.labels.to(device_, /*non_blocking=*/true)};
    copy.done.emplace(device_.type());
    copy.done->record(*copy_stream_);
  }
  copy.host = std::move(host);
  return copy;
}

void DeviceBatchFeeder::stage_next_if_ready() {
  try {
    if (auto host = pipeline_.next_if_ready()) staged_ = start_copy(std::move(*host));
  } catch (...) {
    staged_error_ = std::current_exception();
  }
}

void DeviceBatchFeeder::give_back_unused_buffers() {
  while (!handed_out_.empty()) {
    Copy& oldest = handed_out_.front();
    // Copies on the one copy stream finish in order: if this one has not,
    // no later one has.
    if (oldest.done && !oldest.done->query()) return;
    // Still shared (the step kept a view): not reused; it is freed with its last holder.
    if (only_owner(oldest.host)) pipeline_.give_back(std::move(oldest.host));
    handed_out_.pop_front();
  }
}

std::optional<Batch> DeviceBatchFeeder::next() {
  give_back_unused_buffers();
  if (staged_error_) std::rethrow_exception(std::exchange(staged_error_, nullptr));
  Copy copy;
  if (staged_) {
    copy = std::move(*staged_);
    staged_.reset();
  } else {
    auto host = pipeline_.next();
    if (!host) return std::nullopt;
    copy = start_copy(std::move(*host));
  }
  if (copy.done) {
    const c10::impl::VirtualGuardImpl guard(device_.type());
    const c10::Stream compute = guard.getStream(device_);
    copy.done->block(compute);  // the compute stream waits for the copy; the host does not
    // The device tensors were allocated on the copy stream: the caching
    // allocator must not reuse their memory before the compute stream is
    // done with them too.
    guard.recordDataPtrOnStream(copy.device.images.storage().data_ptr(), compute);
    guard.recordDataPtrOnStream(copy.device.labels.storage().data_ptr(), compute);
  }
  Batch out = std::move(copy.device);
  copy.device = {};
  // Float and normalized: on the device, queued after the copy (CUDA), or
  // done already by the pipeline's threads (CPU).
  if (!pipeline_.finishes_batches()) out.images = pipeline_.preprocessing().finish_batch(out.images);
  handed_out_.push_back(std::move(copy));
  if (copy_stream_) stage_next_if_ready();
  return out;
}

}  // namespace orchestrate
