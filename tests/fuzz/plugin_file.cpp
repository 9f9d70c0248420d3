// What the plugin host reads of a library before dlopen (core/plugin_file),
// on arbitrary bytes: the file check returns a reason or "", the build note
// is found or not, and neither throws. Both ways in are fed, as they reach
// different parts of libelf: the bytes in memory (elf_memory), and the same
// bytes as a file (elf_begin, read with pread).
#include <cstddef>
#include <cstdint>

#include "plugin_file/plugin_build_note.h"
#include "plugin_file/plugin_file_check.h"
#include "scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static orchestrate::fuzz::ScratchFile file("liborchestrate_fuzz.so");
  const std::string in_memory = orchestrate::plugin_file_problem(data, size);
  const std::filesystem::path path(file.write(data, size));
  const std::string from_file = orchestrate::plugin_file_problem(path);
  // One check, two readers: they must agree on whether the file may be loaded.
  if (in_memory.empty() != from_file.empty()) __builtin_trap();
  // The note is read only from a file the check accepted, as the host does.
  if (from_file.empty()) {
    const auto note_in_memory = orchestrate::plugin_build_note(data, size);
    const auto note_from_file = orchestrate::plugin_build_note(path);
    if (note_in_memory.has_value() != note_from_file.has_value()) __builtin_trap();
  }
  return 0;
}
