// safetensors files for LibTorch tensors. No maintained C++ safetensors
// library is packaged in Debian, so the framing (an 8-byte little-endian header
// length, a JSON header, then the tensors' bytes) is written by hand here and
// in safetensors_header.cpp, after the format described at
// https://github.com/huggingface/safetensors (README, "Format"); the JSON
// itself is nlohmann-json's.
#include "checkpoint/safetensors.h"

#include <ATen/ops/empty.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "checkpoint/safetensors_header.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace {

namespace format = safetensors_format;

// The format is little-endian; tensors and the length are copied to and from
// memory as they are.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

std::string system_error(const std::string& path, const std::string& doing) {
  return path + ": cannot " + doing + ": " + std::strerror(errno);
}

// A file descriptor closed on every way out, exceptions included.
class OpenFile {
 public:
  OpenFile(const std::string& path, int flags, mode_t mode = 0)
      : fd_(::open(path.c_str(), flags | O_CLOEXEC, mode)) {}
  ~OpenFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  int fd() const { return fd_; }
  // Closes now, for a writer that must see close's error.
  int close() { return ::close(std::exchange(fd_, -1)); }

 private:
  int fd_;
};

void read_exact(const std::string& path, int fd, void* destination, std::uint64_t bytes, std::uint64_t offset) {
  auto* out = static_cast<char*>(destination);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd, out, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw DataError(system_error(path, "read it"));
    if (n == 0)
      throw DataError(path + ": truncated while reading (the file shrank); read it again once it is complete");
    out += n, offset += n, bytes -= n;
  }
}

void write_all(const std::string& path, int fd, const void* source, std::uint64_t bytes) {
  const auto* in = static_cast<const char*>(source);
  while (bytes > 0) {
    const ssize_t n = ::write(fd, in, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(system_error(path, "write it") + "; check free space and permissions");
    in += n, bytes -= n;
  }
}

struct FileHeader {
  format::Header header;
  std::uint64_t data_start = 0;  // where the tensor data begins in the file
};

FileHeader read_file_header(const std::string& path, int fd) {
  struct stat status {};
  if (::fstat(fd, &status) != 0) throw DataError(system_error(path, "stat it"));
  if (!S_ISREG(status.st_mode)) throw DataError(path + ": not a regular file; give the path of a .safetensors file");
  const auto file_bytes = static_cast<std::uint64_t>(status.st_size);
  if (file_bytes < format::kLengthPrefixBytes)
    throw DataError(path + ": too short for a safetensors file: " + std::to_string(file_bytes) +
                    " bytes, less than the 8-byte header length; the file is empty or incomplete, copy it again");
  std::uint64_t header_bytes = 0;  // little-endian on disk and in memory
  read_exact(path, fd, &header_bytes, format::kLengthPrefixBytes, 0);
  if (header_bytes > format::kMaxHeaderBytes)
    throw DataError(path + ": bad header length " + std::to_string(header_bytes) + " (more than the " +
                    std::to_string(format::kMaxHeaderBytes) +
                    "-byte limit); this is not a safetensors file or its first 8 bytes are damaged");
  const std::uint64_t after_prefix = file_bytes - format::kLengthPrefixBytes;
  if (header_bytes > after_prefix)
    throw DataError(path + ": truncated: the header length says " + std::to_string(header_bytes) +
                    " bytes of JSON, the file has " + std::to_string(after_prefix) +
                    " after the 8-byte length; the file is incomplete or not a safetensors file, copy it again");
  std::string text(header_bytes, '\0');
  read_exact(path, fd, text.data(), header_bytes, format::kLengthPrefixBytes);
  const std::uint64_t data_start = format::kLengthPrefixBytes + header_bytes;
  return {format::parse_header(path, text, file_bytes - data_start), data_start};
}

// The bytes a tensor is stored as: dense, on CPU, row-major, with lazy
// conjugation and negation applied. Copies only what needs copying.
at::Tensor contiguous_cpu(const at::Tensor& tensor) {
  const at::Tensor dense = tensor.layout() == at::kStrided ? tensor : tensor.to_dense();
  return dense.detach().cpu().resolve_conj().resolve_neg().contiguous();
}

struct PlannedTensor {
  const std::string* name;
  const at::Tensor* tensor;
  std::string_view dtype;
  std::uint64_t bytes;
};

// Checks every name and dtype before the file is touched, so a bad call
// leaves an existing file intact; returns the tensors in the order stored.
std::vector<PlannedTensor> plan_layout(const std::string& path, const NamedTensors& content) {
  std::vector<PlannedTensor> plan;
  std::set<std::string_view> names;
  for (const auto& [name, tensor] : content.tensors) {
    if (name.empty()) throw Error(path + ": a tensor has an empty name; give every tensor a name");
    if (name == "__metadata__")
      throw Error(path + ": a tensor cannot be named \"__metadata__\" (the format's metadata key); rename it");
    if (!names.insert(name).second)
      throw Error(path + ": the tensor name '" + name + "' appears twice; names must be unique");
    if (!tensor.defined())
      throw Error(path + ": tensor '" + name + "' is undefined; give it a value or leave it out");
    const auto dtype = format::dtype_name(tensor.scalar_type());
    if (!dtype)
      throw Error(path + ": tensor '" + name + "' has dtype " + c10::toString(tensor.scalar_type()) +
                  ", which safetensors cannot store (supported: " + format::supported_dtype_names() +
                  "); convert it first");
    plan.push_back({&name, &tensor, *dtype, static_cast<std::uint64_t>(tensor.numel()) * tensor.element_size()});
  }
  // Largest element first: with the header padded to 8 bytes, every tensor
  // then starts at a multiple of its element size in the file.
  std::sort(plan.begin(), plan.end(), [](const PlannedTensor& a, const PlannedTensor& b) {
    const auto a_size = a.tensor->element_size(), b_size = b.tensor->element_size();
    return a_size != b_size ? a_size > b_size : *a.name < *b.name;
  });
  return plan;
}

std::string header_text(const std::string& path, const NamedTensors& content, const std::vector<PlannedTensor>& plan) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!content.metadata.empty()) header["__metadata__"] = content.metadata;
  std::uint64_t offset = 0;
  for (const auto& p : plan) {
    header[*p.name] = {{"dtype", p.dtype},
                       {"shape", p.tensor->sizes().vec()},
                       {"data_offsets", nlohmann::ordered_json::array({offset, offset + p.bytes})}};
    offset += p.bytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": a tensor name or metadata string is not valid UTF-8 (" + e.what() + "); fix it");
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // spaces, as the reference pads
  return text;
}

}  // namespace

void write_safetensors(const std::string& path, const NamedTensors& content) {
  const auto plan = plan_layout(path, content);
  const std::string header = header_text(path, content, plan);
  OpenFile file(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (file.fd() < 0) throw Error(system_error(path, "create it") + "; check that its directory exists and is writable");
  const std::uint64_t header_bytes = header.size();
  write_all(path, file.fd(), &header_bytes, format::kLengthPrefixBytes);
  write_all(path, file.fd(), header.data(), header.size());
  for (const auto& p : plan) {
    const at::Tensor bytes = contiguous_cpu(*p.tensor);  // one copy alive at a time, if any
    write_all(path, file.fd(), bytes.const_data_ptr(), p.bytes);
  }
  if (::fsync(file.fd()) != 0) throw Error(system_error(path, "flush it to disk (fsync)"));
  if (file.close() != 0) throw Error(system_error(path, "close it"));
}

NamedTensors read_safetensors(const std::string& path) {
  OpenFile file(path, O_RDONLY);
  if (file.fd() < 0) throw DataError(system_error(path, "open it") + "; check the path");
  const FileHeader header = read_file_header(path, file.fd());
  const auto& entries = header.header.entries;
  NamedTensors content;
  content.metadata = header.header.metadata;
  content.tensors.resize(entries.size());
  // Read in file order, so a large file is read front to back.
  std::vector<std::size_t> by_offset(entries.size());
  std::iota(by_offset.begin(), by_offset.end(), 0);
  std::sort(by_offset.begin(), by_offset.end(),
            [&](std::size_t a, std::size_t b) { return entries[a].begin < entries[b].begin; });
  for (const std::size_t i : by_offset) {
    const auto& e = entries[i];
    at::Tensor tensor = at::empty(e.shape, at::TensorOptions().dtype(e.dtype));
    read_exact(path, file.fd(), tensor.mutable_data_ptr(), e.end - e.begin, header.data_start + e.begin);
    content.tensors[i] = {e.name, std::move(tensor)};
  }
  return content;
}

std::vector<TensorInfo> read_safetensors_header(const std::string& path) {
  OpenFile file(path, O_RDONLY);
  if (file.fd() < 0) throw DataError(system_error(path, "open it") + "; check the path");
  std::vector<TensorInfo> infos;
  for (auto& e : read_file_header(path, file.fd()).header.entries) infos.push_back({e.name, e.dtype, e.shape});
  return infos;
}

}  // namespace orchestrate
