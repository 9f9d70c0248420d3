// Compiled with USE_C10D_NCCL and the NCCL headers of the wheel's nvidia-nccl
// package (the NCCL libtorch_cuda was built and runs with) when the build
// found them; otherwise NCCL is reported missing at run time.
#ifdef ORCHESTRATE_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "distributed/process_group_backends.h"
#include "orchestrate/error.h"

namespace orchestrate {

bool nccl_compiled_in() {
#ifdef ORCHESTRATE_WITH_NCCL
  return true;
#else
  return false;
#endif
}

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                    std::chrono::milliseconds timeout) {
#ifdef ORCHESTRATE_WITH_NCCL
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, options);
#else
  (void)store, (void)rank, (void)size, (void)timeout;
  throw Error("[distributed] backend nccl: this orchestrate was built without NCCL (nccl.h was not found at "
              "configure time); rebuild with the CUDA LibTorch and NCCL installed, or use backend = \"gloo\"");
#endif
}

}  // namespace orchestrate
