// IdxFile::read, the one part of the IDX reader that needs LibTorch: the
// bytes read_bytes() returns, handed to a tensor without a copy.
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>

#include <memory>
#include <vector>

#include "idx_file.h"

namespace orchestrate {

at::Tensor IdxFile::read(std::int64_t limit, const std::string& what) {
  std::vector<std::int64_t> sizes{kept(limit)};
  for (const auto side : item_shape()) sizes.push_back(side);
  auto bytes = std::make_unique<std::vector<std::uint8_t>>(read_bytes(limit, what));
  if (bytes->empty()) return at::empty(sizes, at::kByte);
  auto* owned = bytes.get();
  auto tensor = at::from_blob(owned->data(), sizes, [owned](void*) { delete owned; }, at::kByte);
  bytes.release();  // the tensor's deleter owns it now
  return tensor;
}

}  // namespace orchestrate
