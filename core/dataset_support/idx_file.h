// IDX files of unsigned bytes, the format of MNIST and Fashion-MNIST, read
// gzip-compressed (as published) or not. Shared by the datasets that read
// them, so a damaged file is described the same way by each.
//
// The header and the bytes are read without LibTorch (idx_file.cpp, which the
// fuzz build compiles alone); read() wraps them in a tensor (idx_file_tensor.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace at {
class Tensor;
}

namespace orchestrate {

class GzipInput;

// Where an IDX file comes from, for messages: "[data] <dataset>: <path>: ...",
// and what to do when it is not there.
struct IdxSource {
  std::string path;
  std::string dataset;
  std::string missing_hint;
};

class IdxFile {
 public:
  // Opens the file and reads its header, which must declare `dimensions`
  // dimensions of unsigned bytes (magic 2051 for images, 2049 for labels),
  // none of an item's sides zero; `kind` ("image", "label") names the file
  // in that message.
  IdxFile(IdxSource source, std::uint32_t dimensions, const std::string& kind);
  ~IdxFile();
  IdxFile(const IdxFile&) = delete;
  IdxFile& operator=(const IdxFile&) = delete;

  std::uint32_t count() const { return shape_.front(); }
  // The declared sides of one item (rows, columns for images; none for labels).
  std::vector<std::uint32_t> item_shape() const { return {shape_.begin() + 1, shape_.end()}; }

  // The first `limit` items (0: all), uint8 [kept, item sides...]. Reading
  // only those keeps quick runs quick; the rest of the file is then not
  // checked, otherwise data after the declared items is an error.
  at::Tensor read(std::int64_t limit, const std::string& what);

  // The bytes read() holds, item after item. Memory grows with the data
  // actually read, never with what the header claims: a header declaring
  // far more than the file holds fails as truncated after reading what there
  // is, not with an allocation of the declared size.
  std::vector<std::uint8_t> read_bytes(std::int64_t limit, const std::string& what);
  // How many items read(limit, ...) keeps.
  std::int64_t kept(std::int64_t limit) const;

  // Throws DataError "[data] <dataset>: <path>: <problem>".
  [[noreturn]] void fail(const std::string& problem) const;

 private:
  IdxSource source_;
  std::unique_ptr<GzipInput> input_;
  std::vector<std::uint32_t> shape_;
};

}  // namespace orchestrate
