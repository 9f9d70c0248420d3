#include "cli/heap_reuse.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace orchestrate::cli {

void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  // Setting the mmap threshold also stops glibc from moving it (and the trim
  // threshold) as blocks are freed. A refusal leaves glibc's defaults, which
  // are slower but correct, so the return values are not checked.
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}

}  // namespace orchestrate::cli
