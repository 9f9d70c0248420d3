// Keeps the memory of freed tensors in the process for the next step.
#pragma once

namespace orchestrate::cli {

// glibc's malloc hands a freed block back to the kernel when it ends the
// heap (trim) or was mmapped, and the next step's tensor of the same size
// then pays a page fault per 4 KB page to get it back. Measured on LeNet over
// mock 28x28 images (batch 32, one thread, 300 steps): 690 faults a step and
// 0.8 s of system time in a 3 s run with the run store's rows, 170 and 0.3 s
// without them: its few allocations decided where the heap ended, so logging
// seemed to cost 15 % of the run. With the settings below, 0 and 0.2 s either way.
// With a fixed mmap threshold at glibc's maximum (32 MB) and a trim
// threshold of 1 GB, freed blocks stay for reuse, as LibTorch's CUDA caching
// allocator keeps device memory: the process holds its peak heap until it
// exits. Call first thing in main; a no-op on other C libraries.
void keep_freed_memory_for_reuse();

}  // namespace orchestrate::cli
