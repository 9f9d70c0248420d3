// Reading and writing LibTorch tensors as safetensors files
// (https://github.com/huggingface/safetensors), the format Hugging Face and
// most of the PyTorch ecosystem exchange weights in. Files written here load
// with Python's `safetensors.torch.load_file`, and files it writes read here.
//
// Every problem with a file is an orchestrate::DataError whose one-line
// message names the file, what is wrong and how to fix it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace orchestrate {

struct NamedTensors {
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  std::map<std::string, std::string> metadata;  // the file's "__metadata__"
};

// "[10, 84]": a tensor's shape as error messages and records show it.
std::string shape_text(c10::IntArrayRef sizes);

// Writes `content` to `path` (replacing it) and fsyncs the file. Tensors may be
// on any device, in any layout, non-contiguous: each is copied to CPU and made
// contiguous one at a time while writing. Names must be unique and non-empty.
// The data is laid out by element size, largest first, then by name (as Python's
// safetensors does), so every tensor starts at a multiple of its element size
// and readers that map the file can view tensors in place.
void write_safetensors(const std::string& path, const NamedTensors& content);

// Reads and validates the whole file. Tensors are on CPU, own their memory
// (no view of a mapping) and come sorted by name.
NamedTensors read_safetensors(const std::string& path);

// What the header says about one tensor, without its data.
struct TensorInfo {
  std::string name;
  at::ScalarType dtype;
  std::vector<std::int64_t> shape;
};

// Reads and validates only the header (cheap on a large file): the tensors'
// names, dtypes and shapes, sorted by name.
std::vector<TensorInfo> read_safetensors_header(const std::string& path);

}  // namespace orchestrate
