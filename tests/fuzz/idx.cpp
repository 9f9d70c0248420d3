// IDX files (core/dataset_support/idx_file), gzip-compressed or not: any
// bytes as an image file (3 dimensions) and as a label file (1), read whole
// and with a limit of one item, as the idx and fashion_mnist datasets read
// them. Damage must surface as orchestrate::Error; what is read must be
// exactly the items the header declares.
#include <cstddef>
#include <cstdint>
#include <string>

#include "orchestrate/dataset_support/idx_file.h"
#include "orchestrate/error.h"
#include "scratch_file.h"

namespace {

void read_as(const std::string& path, std::uint32_t dimensions, const char* kind, std::int64_t limit) {
  try {
    orchestrate::IdxFile file({path, "idx", "(a fuzz input)"}, dimensions, kind);
    std::uint64_t expected = static_cast<std::uint64_t>(file.kept(limit));
    for (const auto side : file.item_shape()) expected *= side;  // it read them, so this cannot overflow
    if (file.read_bytes(limit, "items").size() != expected) __builtin_trap();
  } catch (const orchestrate::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static orchestrate::fuzz::ScratchFile file("input.idx");
  const std::string& path = file.write(data, size);
  for (const std::int64_t limit : {0, 1}) {
    read_as(path, 3, "image", limit);
    read_as(path, 1, "label", limit);
  }
  return 0;
}
