#include "distributed/collective.h"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <map>

#include <ATen/ops/empty_like.h>
#include <ATen/ops/flatten_dense_tensors.h>
#include <ATen/ops/unflatten_dense_tensors.h>
#include <c10/core/GradMode.h>
#include <c10/util/Logging.h>

#include "distributed/process_group_backends.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace {

std::string seconds_text(std::chrono::milliseconds timeout) {
  return std::to_string(timeout.count() / 1000) + " s";
}

// c10d logs each failed connection attempt with a stack trace; the error
// orchestrate throws already says what failed and how to fix it.
class QuietC10Log {
 public:
  QuietC10Log() : saved_(FLAGS_caffe2_log_level) { FLAGS_caffe2_log_level = c10::GLOG_FATAL; }
  ~QuietC10Log() { FLAGS_caffe2_log_level = saved_; }
  QuietC10Log(const QuietC10Log&) = delete;
  QuietC10Log& operator=(const QuietC10Log&) = delete;

 private:
  int saved_;
};

// c10d's TCPStore, with its failures turned into errors that say what to fix.
c10::intrusive_ptr<c10d::Store> rendezvous(const LaunchEnvironment& env, std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(env.master_port);
  options.isServer = env.rank == 0;
  options.numWorkers = static_cast<std::size_t>(env.world_size);
  options.waitWorkers = true;
  options.timeout = timeout;
  const std::string address = env.master_addr + ":" + std::to_string(env.master_port);
  try {
    QuietC10Log quiet;
    return c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
  } catch (const std::exception& e) {
    const std::string cause = exception_reason(e);
    if (env.rank == 0)
      throw Error("rendezvous at " + address + " (" + env.launcher + " launch, rank 0 of " +
                  std::to_string(env.world_size) + ") failed: not all " + std::to_string(env.world_size) +
                  " workers joined within " + seconds_text(timeout) + " (" + cause +
                  "); start every worker with the same MASTER_ADDR, MASTER_PORT and WORLD_SIZE, or raise "
                  "[distributed] timeout_s");
    throw Error("rendezvous: rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) +
                " could not reach rank 0 at " + address + " within " + seconds_text(timeout) + " (" + cause +
                "); check that rank 0 is running and that MASTER_ADDR and MASTER_PORT name its host and port");
  }
}

}  // namespace

PendingCollective::PendingCollective(c10::intrusive_ptr<c10d::Work> work, std::string what)
    : work_(std::move(work)), what_(std::move(what)) {}

void PendingCollective::wait() {
  if (!work_) return;
  auto work = std::move(work_);
  try {
    work->wait();
  } catch (const std::exception& e) {
    throw Error(what_ + " failed: " + exception_reason(e) +
                "; another worker has probably died or hung (see its output above), or [distributed] timeout_s "
                "is too short");
  }
}

Collective::Collective(const LaunchEnvironment& environment, c10::Device device, const CollectiveOptions& options)
    : environment_(environment), device_(device), timeout_(options.timeout) {
  std::string backend = options.backend;
  if (backend == "auto") backend = device.is_cuda() ? "nccl" : "gloo";
  if (backend == "nccl" && !device.is_cuda())
    throw Error("[distributed] backend = \"nccl\" needs the CUDA device; this run trains on " + device.str() +
                ": use backend = \"gloo\" (or \"auto\")");
  engine_ = backend;
  store_ = rendezvous(environment_, timeout_);
  try {
    backend_ = backend == "nccl" ? make_nccl_backend(store_, rank(), world_size(), timeout_)
                                 : make_gloo_backend(store_, rank(), world_size(), timeout_, environment_.master_addr);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(describe("forming the " + engine_ + " process group") + " failed: " + exception_reason(e) +
                "; check that every worker can reach the others (GLOO_SOCKET_IFNAME picks the network interface)");
  }
}

Collective::~Collective() = default;

std::string Collective::describe(const std::string& operation) const {
  return "rank " + std::to_string(rank()) + " of " + std::to_string(world_size()) + " (" + engine_ + "): " +
         operation;
}

void Collective::finish(c10::intrusive_ptr<c10d::Work> work, const std::string& operation) {
  PendingCollective(std::move(work), describe(operation)).wait();
}

PendingCollective Collective::all_reduce_sum_async(at::Tensor& tensor) {
  std::vector<at::Tensor> tensors{tensor};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::SUM;
  options.timeout = timeout_;
  return PendingCollective(backend_->allreduce(tensors, options), describe("all-reduce"));
}

void Collective::all_reduce_sum(at::Tensor& tensor) { all_reduce_sum_async(tensor).wait(); }

void Collective::all_reduce_max(at::Tensor& tensor) {
  std::vector<at::Tensor> tensors{tensor};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::MAX;
  options.timeout = timeout_;
  finish(backend_->allreduce(tensors, options), "all-reduce (max)");
}

std::vector<at::Tensor> Collective::all_gather(const at::Tensor& tensor) {
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int r = 0; r < world_size(); ++r) outputs[0].push_back(at::empty_like(tensor));
  std::vector<at::Tensor> inputs{tensor};
  c10d::AllgatherOptions options;
  options.timeout = timeout_;
  finish(backend_->allgather(outputs, inputs, options), "all-gather");
  return outputs[0];
}

void Collective::broadcast(at::Tensor& tensor, int root) {
  std::vector<at::Tensor> tensors{tensor};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  options.timeout = timeout_;
  finish(backend_->broadcast(tensors, options), "broadcast");
}

void copy_piece(at::Tensor& destination, const at::Tensor& piece) {
  if (piece.data_ptr() == destination.data_ptr()) return;
  destination.copy_(piece);
}

void Collective::broadcast_in_place(const std::vector<at::Tensor>& tensors, int root) {
  c10::NoGradGuard no_grad;
  std::map<c10::ScalarType, std::vector<at::Tensor>> by_dtype;
  for (const auto& t : tensors) by_dtype[t.scalar_type()].push_back(t);
  for (auto& [dtype, group] : by_dtype) {
    auto flat = at::flatten_dense_tensors(group);
    broadcast(flat, root);
    const auto values = at::unflatten_dense_tensors(flat, group);
    for (std::size_t i = 0; i < group.size(); ++i) copy_piece(group[i], values[i]);
  }
}

void Collective::barrier() {
  c10d::BarrierOptions options;
  options.timeout = timeout_;
  finish(backend_->barrier(options), "barrier");
}

}  // namespace orchestrate
