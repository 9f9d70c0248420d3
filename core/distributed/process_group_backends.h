// The two c10d process groups orchestrate uses, each built in its own
// translation unit: their headers need the engines' own headers (gloo's,
// NCCL's) and build flags, which nothing else should see.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>

namespace orchestrate {

// c10d::ProcessGroupGloo (compiled into the wheel's libtorch_cpu). Its TCP
// device binds to GLOO_SOCKET_IFNAME when set, to the loopback address when the
// job's master address is a loopback one, and otherwise to the address this
// host's name resolves to (c10d's default).
c10::intrusive_ptr<c10d::Backend> make_gloo_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                    std::chrono::milliseconds timeout, const std::string& master_addr);

// c10d::ProcessGroupNCCL (the wheel's libtorch_cuda), on the current CUDA
// device. Throws when this build has no NCCL.
c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                    std::chrono::milliseconds timeout);
bool nccl_compiled_in();

}  // namespace orchestrate
