// Fashion-MNIST read straight from the gzip-compressed IDX files that Zalando
// publishes and Debian's dataset-fashion-mnist installs, so no conversion step
// is needed. The whole split is kept in memory as uint8 (47 MB for train).
#include <ATen/ATen.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrate/dataset.h"
#include "orchestrate/error.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

using orchestrate::Batch;
using orchestrate::DataError;
using orchestrate::DatasetInfo;
using orchestrate::DatasetSplit;
using orchestrate::Params;

constexpr std::uint32_t kImageFileMagic = 2051;  // IDX: unsigned bytes, 3 dimensions
constexpr std::uint32_t kLabelFileMagic = 2049;  // IDX: unsigned bytes, 1 dimension
constexpr std::int64_t kImageSide = 28;
constexpr std::int64_t kNumClasses = 10;

const std::vector<std::string>& class_names() {
  static const std::vector<std::string> names{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                              "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw DataError("[data] fashion_mnist: " + path + ": " + problem);
}

// Paths are plain strings: std::filesystem is avoided because the LibTorch
// wheel exports its own, partly broken, copy of it (pytorch/pytorch#133437).
std::string join_path(const std::string& dir, const std::string& file) {
  return dir.empty() || dir.back() == '/' ? dir + file : dir + "/" + file;
}

// A gzip file read front to back; gzread also reads uncompressed files as is.
class GzipReader {
 public:
  explicit GzipReader(std::string path) : path_(std::move(path)) {
    errno = 0;
    file_ = gzopen(path_.c_str(), "rb");
    if (!file_ && errno == ENOENT)
      fail(path_,
           "file not found; install the Debian package dataset-fashion-mnist or set [data] dir to the "
           "directory holding the Fashion-MNIST .gz files");
    if (!file_) fail(path_, std::string("cannot be opened: ") + std::strerror(errno));
    gzbuffer(file_, 1 << 20);
  }
  ~GzipReader() { gzclose(file_); }
  GzipReader(const GzipReader&) = delete;
  GzipReader& operator=(const GzipReader&) = delete;

  const std::string& path() const { return path_; }

  // Fills `destination` completely or throws, naming `what` was being read.
  void read_exactly(void* destination, std::size_t bytes, const std::string& what) {
    auto* out = static_cast<unsigned char*>(destination);
    std::size_t done = 0;
    while (done < bytes) {
      const auto chunk = static_cast<unsigned>(std::min<std::size_t>(bytes - done, 1u << 30));
      const int got = gzread(file_, out + done, chunk);
      if (got < 0) fail_corrupt();
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    if (done < bytes) {
      int code = Z_OK;
      gzerror(file_, &code);
      if (code != Z_OK && code != Z_BUF_ERROR) fail_corrupt();
      fail(path_, "truncated: expected " + std::to_string(bytes) + " bytes of " + what + ", found " +
                      std::to_string(done) + "; the download was cut short, reinstall or download it again");
    }
  }

  std::uint32_t read_big_endian_u32(const std::string& what) {
    std::array<unsigned char, 4> bytes{};
    read_exactly(bytes.data(), bytes.size(), what);
    return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) | (std::uint32_t{bytes[2]} << 8) |
           std::uint32_t{bytes[3]};
  }

  bool at_end() {
    unsigned char extra = 0;
    const int got = gzread(file_, &extra, 1);
    if (got < 0) fail_corrupt();
    return got == 0;
  }

 private:
  [[noreturn]] void fail_corrupt() {
    int code = Z_OK;
    const char* message = gzerror(file_, &code);
    fail(path_, std::string("corrupt gzip data (") + (message ? message : "unknown zlib error") +
                    "); reinstall or download it again");
  }

  std::string path_;
  gzFile file_ = nullptr;
};

void expect_magic(GzipReader& reader, std::uint32_t expected, const std::string& kind) {
  const std::uint32_t magic = reader.read_big_endian_u32("header");
  if (magic != expected)
    fail(reader.path(), "magic number is " + std::to_string(magic) + ", expected " + std::to_string(expected) +
                            " for an IDX " + kind + " file; the file is not what its name says, or is corrupt");
}

// Reading only the first `limit` records keeps quick runs quick; the rest of
// the file is then not checked for truncation.
std::int64_t records_to_read(std::uint32_t count, std::int64_t limit) {
  return limit > 0 ? std::min<std::int64_t>(limit, count) : std::int64_t{count};
}

void expect_end_if_complete(GzipReader& reader, std::int64_t read, std::uint32_t declared) {
  if (read == std::int64_t{declared} && !reader.at_end())
    fail(reader.path(), "has data after the " + std::to_string(declared) +
                            " records its header declares; the file is corrupt, reinstall or download it again");
}

struct ImageFile {
  std::uint32_t declared_count;
  at::Tensor pixels;  // uint8 [N, 28, 28]
};

ImageFile read_images(const std::string& path, std::int64_t limit) {
  GzipReader reader(path);
  expect_magic(reader, kImageFileMagic, "image");
  const std::uint32_t count = reader.read_big_endian_u32("header");
  const std::uint32_t rows = reader.read_big_endian_u32("header");
  const std::uint32_t columns = reader.read_big_endian_u32("header");
  if (rows != kImageSide || columns != kImageSide)
    fail(path, "holds " + std::to_string(rows) + "x" + std::to_string(columns) +
                   " images, but Fashion-MNIST images are 28x28; point [data] dir at Fashion-MNIST");
  const std::int64_t kept = records_to_read(count, limit);
  auto pixels = at::empty({kept, kImageSide, kImageSide}, at::kByte);
  reader.read_exactly(pixels.data_ptr<std::uint8_t>(), static_cast<std::size_t>(pixels.numel()), "pixels");
  expect_end_if_complete(reader, kept, count);
  return {count, pixels};
}

struct LabelFile {
  std::uint32_t declared_count;
  at::Tensor labels;  // int64 [N]
};

LabelFile read_labels(const std::string& path, std::int64_t limit) {
  GzipReader reader(path);
  expect_magic(reader, kLabelFileMagic, "label");
  const std::uint32_t count = reader.read_big_endian_u32("header");
  const std::int64_t kept = records_to_read(count, limit);
  std::vector<std::uint8_t> raw(static_cast<std::size_t>(kept));
  reader.read_exactly(raw.data(), raw.size(), "labels");
  expect_end_if_complete(reader, kept, count);
  auto labels = at::empty({kept}, at::kLong);
  auto* label_data = labels.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < kept; ++i) {
    if (raw[i] >= kNumClasses)
      fail(path, "label " + std::to_string(raw[i]) + " of example " + std::to_string(i) +
                     " is outside 0..9; the file is corrupt, reinstall or download it again");
    label_data[i] = raw[i];
  }
  return {count, labels};
}

class FashionMnistDataset final : public orchestrate::Dataset {
 public:
  FashionMnistDataset(const Params& params, DatasetSplit split) {
    const std::string& dir = params.string("dir");
    const std::string prefix = split == DatasetSplit::train ? "train" : "t10k";
    const std::string image_path = join_path(dir, prefix + "-images-idx3-ubyte.gz");
    const std::string label_path = join_path(dir, prefix + "-labels-idx1-ubyte.gz");
    const std::int64_t limit = params.integer("limit");
    auto images = read_images(image_path, limit);
    auto labels = read_labels(label_path, limit);
    if (images.declared_count != labels.declared_count)
      throw DataError("[data] fashion_mnist: " + image_path + " holds " + std::to_string(images.declared_count) +
                      " images but " + label_path + " holds " + std::to_string(labels.declared_count) +
                      " labels; both files must come from the same Fashion-MNIST split");
    images_ = std::move(images.pixels);
    labels_ = std::move(labels.labels);
    keep_classes(params.integer_list("classes"));
  }

  DatasetInfo info() const override { return {1, kImageSide, kImageSide, num_classes(), names_}; }

  std::int64_t size() const override { return images_.size(0); }

  Batch get_batch(const std::vector<std::int64_t>& indices) const override {
    for (const std::int64_t index : indices)
      if (index < 0 || index >= size())
        throw std::out_of_range("fashion_mnist: index " + std::to_string(index) + " is outside [0, " +
                                std::to_string(size()) + ")");
    const auto selection = at::tensor(indices);
    auto images = images_.index_select(0, selection).unsqueeze(1).to(at::kFloat).div_(255.0);
    return {images, labels_.index_select(0, selection)};
  }

 private:
  // Keeps only the examples of `classes`, relabelled 0, 1, ... in the order
  // given: a different class set for transfer learning from the same files.
  void keep_classes(const std::vector<std::int64_t>& classes) {
    names_ = class_names();
    if (classes.empty()) return;
    auto relabel = at::full({kNumClasses}, -1, at::kLong);
    names_.clear();
    for (std::size_t i = 0; i < classes.size(); ++i) {
      relabel[classes[i]] = static_cast<std::int64_t>(i);
      names_.push_back(class_names()[static_cast<std::size_t>(classes[i])]);
    }
    const auto new_labels = relabel.index_select(0, labels_);
    const auto kept = new_labels.ge(0).nonzero().squeeze(1);
    images_ = images_.index_select(0, kept);
    labels_ = new_labels.index_select(0, kept);
  }

  std::int64_t num_classes() const { return static_cast<std::int64_t>(names_.size()); }

  at::Tensor images_;  // uint8 [N, 28, 28]; only read after construction
  at::Tensor labels_;  // int64 [N]
  std::vector<std::string> names_;
};

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      string_param("dir", "/usr/share/datasets/fashion-mnist",
                   "directory holding train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, "
                   "t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz"),
      int_param("limit", 0, "keep only the first N examples of each split (0: all), for quick runs").at_least(0),
      int_list_param("classes", std::vector<std::int64_t>{},
                     "keep only these classes (0-9), relabelled 0, 1, ... in this order; empty: all ten")
          .between(0, kNumClasses - 1),
  };
  schema.rule([](const Params& p) -> std::string {
    auto classes = p.integer_list("classes");
    std::sort(classes.begin(), classes.end());
    if (std::adjacent_find(classes.begin(), classes.end()) != classes.end()) return "classes: a class is listed twice";
    if (classes.size() == 1) return "classes: keep at least two classes";
    return "";
  });
  registry.datasets().add(
      "fashion_mnist", "Zalando's Fashion-MNIST: 28x28 grey clothing images, 10 classes", std::move(schema),
      [](const Params& params, DatasetSplit split) { return std::make_unique<FashionMnistDataset>(params, split); });
}

}  // namespace

ORCHESTRATE_PLUGIN("fashion_mnist", "1.0.0", register_components)
