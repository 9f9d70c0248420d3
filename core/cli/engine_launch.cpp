#include "cli/engine_launch.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli/torch_library_lookup.h"
#include "orchestrate/error.h"

namespace orchestrate::cli {

std::filesystem::path engine_path() {
  const std::filesystem::path front_end = std::filesystem::read_symlink("/proc/self/exe");
  return (front_end.parent_path() / ORCHESTRATE_ENGINE_FROM_FRONT_END).lexically_normal();
}

void exec_engine(char** argv) {
  const std::filesystem::path engine = engine_path();
  if (access(engine.c_str(), X_OK) != 0)
    throw Error("the engine executable " + engine.string() + " is missing or not executable (" +
                std::strerror(errno) + "); every command but the queries runs in it: rebuild (cmake --build BUILD) " +
                "or reinstall (cmake --install BUILD --prefix PREFIX)");
  make_torch_findable(engine);
  // LibTorch's CPU allocator then asks for transparent huge pages for every
  // buffer of 2 MiB or more (a batch, a float copy of it): the kernel
  // zero-fills a fresh buffer 2 MiB at a time instead of faulting it in 4 KiB
  // pages. Measured on the 2-core EPYC: the input pipeline (bench-input,
  // resnet preset, batch 64) spent 15 % of its time in page faults without
  // it, and gained 24 %. Read once, at LibTorch's first allocation, so it is
  // set before the engine starts; a value the user set is kept.
  setenv("THP_MEM_ALLOC_ENABLE", "1", /*overwrite=*/0);
  std::cout.flush();
  execv(engine.c_str(), argv);
  throw Error("cannot execute the engine " + engine.string() + ": " + std::strerror(errno));
}

}  // namespace orchestrate::cli
