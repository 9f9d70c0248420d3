// The collective engine of a data-parallel job: c10d's process groups (Gloo on
// the CPU, NCCL on CUDA) behind one small interface, with c10d's TCPStore for
// the rendezvous. orchestrate never implements a collective itself.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "distributed/launch_environment.h"

namespace orchestrate {

struct CollectiveOptions {
  std::string backend = "auto";  // auto (NCCL for CUDA tensors, Gloo otherwise), gloo or nccl
  // How long a rendezvous or a collective may wait for the other workers
  // before failing (a dead or hung worker never hangs the job).
  std::chrono::milliseconds timeout{60000};
};

// An all-reduce or all-gather in flight; wait() blocks until it completed
// and throws, naming the job, if a peer failed or the timeout passed.
class PendingCollective {
 public:
  PendingCollective() = default;
  PendingCollective(c10::intrusive_ptr<c10d::Work> work, std::string what);
  void wait();
  bool pending() const { return work_.defined(); }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  std::string what_;  // "rank 1 of 2 (gloo): all-reduce of 4.2 MB", for errors
};

// Copies `piece`, one tensor's part of a flat buffer (a view from
// at::unflatten_dense_tensors), back into `destination`. Nothing to copy when
// the piece is the destination's own memory: flatten_dense_tensors of one
// tensor that is already contiguous returns a view of it, not a copy, and
// copy_ refuses such a source when the strides differ, as a channels-last
// 1x1 conv weight's do from NCHW's though its elements are in the same order.
void copy_piece(at::Tensor& destination, const at::Tensor& piece);

class Collective {
 public:
  // Joins the job `environment` describes: rank 0 hosts the TCPStore at
  // master_addr:master_port, every rank connects, then the process group
  // forms. Throws orchestrate::Error naming the address and what is missing
  // when the rendezvous does not complete within the timeout.
  Collective(const LaunchEnvironment& environment, c10::Device device, const CollectiveOptions& options);
  ~Collective();
  Collective(const Collective&) = delete;
  Collective& operator=(const Collective&) = delete;

  int rank() const { return environment_.rank; }
  int world_size() const { return environment_.world_size; }
  const LaunchEnvironment& environment() const { return environment_; }
  const std::string& engine() const { return engine_; }  // "gloo" or "nccl"
  c10::Device device() const { return device_; }

  // Sums `tensor` in place across ranks, asynchronously.
  PendingCollective all_reduce_sum_async(at::Tensor& tensor);
  void all_reduce_sum(at::Tensor& tensor);
  void all_reduce_max(at::Tensor& tensor);
  // Every rank's `tensor` (same shape and dtype on all ranks), in rank order.
  std::vector<at::Tensor> all_gather(const at::Tensor& tensor);
  // Rank `root`'s values into `tensor` on every rank.
  void broadcast(at::Tensor& tensor, int root = 0);
  // Rank `root`'s values of `tensors` (parameters, buffers: any shapes) into
  // every rank's, in place: one broadcast per dtype, not one per tensor.
  void broadcast_in_place(const std::vector<at::Tensor>& tensors, int root = 0);
  void barrier();

 private:
  std::string describe(const std::string& operation) const;
  void finish(c10::intrusive_ptr<c10d::Work> work, const std::string& operation);

  LaunchEnvironment environment_;
  c10::Device device_;
  std::string engine_;
  std::chrono::milliseconds timeout_;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::Backend> backend_;
};

}  // namespace orchestrate
