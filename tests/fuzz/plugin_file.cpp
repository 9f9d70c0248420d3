// The check a plugin library passes before dlopen (core/plugin_file), on
// arbitrary bytes: it returns a reason or "", and throws nothing. Both ways
// in are fed, as they reach different parts of libelf: the bytes in memory
// (elf_memory), and the same bytes as a file (elf_begin, read with pread).
#include <cstddef>
#include <cstdint>

#include "plugin_file_check.h"
#include "scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static orchestrate::fuzz::ScratchFile file("liborchestrate_fuzz.so");
  const std::string in_memory = orchestrate::plugin_file_problem(data, size);
  const std::string from_file = orchestrate::plugin_file_problem(std::filesystem::path(file.write(data, size)));
  // One check, two readers: they must agree on whether the file may be loaded.
  if (in_memory.empty() != from_file.empty()) __builtin_trap();
  return 0;
}
