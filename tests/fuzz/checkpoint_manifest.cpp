// checkpoint.json (core/checkpoint/checkpoint_meta): any bytes as the
// description of a checkpoint directory, read as `--resume`, `eval` and
// `export` read it. A damaged or hand-edited description must surface as
// orchestrate::Error; and what it accepts must be usable: positions and
// sizes in range, only the checkpoint's own files named.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "checkpoint/checkpoint_meta.h"
#include "orchestrate/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto meta = orchestrate::parse_checkpoint_meta(text, "/runs/checkpoints/run-1/step-00000006");
    if (meta.step != 6 || meta.micro_batch != 0 || meta.world_size < 1) __builtin_trap();
    for (const auto& [file, bytes] : meta.file_bytes)
      if (bytes < 0 || file.find('/') != std::string::npos) __builtin_trap();
    // What is accepted is written back the same way write_checkpoint writes it.
    const auto again = orchestrate::parse_checkpoint_meta(orchestrate::checkpoint_meta_json(meta),
                                                          "/runs/checkpoints/run-1/step-00000006");
    if (again.step != meta.step || again.file_bytes != meta.file_bytes) __builtin_trap();
  } catch (const orchestrate::Error&) {
  }
  return 0;
}
