#include "engine/setup/device.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <string>

#include "orchestrate/error.h"

namespace orchestrate {
namespace {

// More data-parallel workers than GPUs used to start every worker, and the
// one without a GPU died mid-setup with "CUDA error: invalid device ordinal"
// while the others hung in NCCL's rendezvous (seen on a 1-GPU machine with --nproc 2).
TEST(WorkerCudaDevice, MoreWorkersThanGpusIsOneLineNamingBothCounts) {
  const int gpus = static_cast<int>(torch::cuda::device_count());
  try {
    worker_cuda_device(gpus, gpus + 1);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(std::to_string(gpus + 1) + " workers on this machine"), std::string::npos) << message;
    EXPECT_NE(message.find("it has " + std::to_string(gpus) + " CUDA device"), std::string::npos) << message;
    EXPECT_NE(message.find("--nproc " + std::to_string(gpus) + " or fewer"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace orchestrate
