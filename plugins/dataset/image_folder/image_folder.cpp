// Image folders, torchvision's ImageFolder layout: root/<class>/<image>,
// labels from the sorted class-folder names, JPEG and PNG told apart by
// their bytes (libjpeg-turbo, libpng through core/image). The split comes
// from train/ and val/ folders or from val_fraction (split_files.h). Files
// are listed and checked once when the dataset is built; examples are read
// and decoded when asked for (optionally keeping the decoded pixels in
// memory), at their stored size unless height and width fix one.
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "checked_files.h"
#include "decoded_image_cache.h"
#include "image_bytes.h"
#include "orchestrate/dataset.h"
#include "orchestrate/dataset_support/bad_data_policy.h"
#include "orchestrate/dataset_support/bad_reads.h"
#include "orchestrate/error.h"
#include "orchestrate/image/image_decode.h"
#include "orchestrate/image/image_transforms.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"
#include "split_files.h"

namespace {

using orchestrate::Example;
using orchestrate::SampleRequest;
using orchestrate::DataError;
using orchestrate::DatasetInfo;
using orchestrate::DatasetContext;
using orchestrate::DatasetSplit;
using orchestrate::Params;
using namespace orchestrate::image_folder;

const char* split_name(DatasetSplit split) { return split == DatasetSplit::train ? "train" : "test"; }

// A recipe written for N classes fails on a folder of another count (a
// wrong root, a class folder missing) rather than training a different head.
void check_class_count(const Params& params, const std::vector<std::string>& names) {
  const std::int64_t expected = params.integer("num_classes");
  if (expected == 0 || expected == static_cast<std::int64_t>(names.size())) return;
  std::string listed;
  for (const auto& name : names) listed += (listed.empty() ? "" : ", ") + name;
  throw DataError("[data] image_folder: " + params.string("root") + " has " + std::to_string(names.size()) +
                  " class folders (" + listed + ") but num_classes = " + std::to_string(expected) +
                  "; point root at the right folder or set num_classes = " + std::to_string(names.size()));
}

class ImageFolderDataset final : public orchestrate::Dataset {
 public:
  ImageFolderDataset(const Params& params, const DatasetContext& context)
      : channels_(params.integer("channels")),
        height_(params.integer("height")),
        width_(params.integer("width")),
        max_pixels_(params.integer("max_image_pixels")) {
    const DatasetSplit split = context.split;
    auto listed = split_files(params.string("root"), split,
                              {params.real("val_fraction"), static_cast<std::uint64_t>(params.integer("split_seed"))});
    class_names_ = std::move(listed.class_names);
    check_class_count(params, class_names_);
    auto checked = check_files(listed.files,
                               {params.boolean("verify_images"), channels_, params.integer("limit"), max_pixels_});
    const auto policy = orchestrate::BadDataPolicy::from_params(
        params, "image_folder", "file", "fix or remove the file, or on_corrupt = \"skip\" leaves bad files out",
        context.events);
    orchestrate::apply_bad_data_policy(policy, checked.bad, split_name(split));
    bad_reads_.emplace(policy, split_name(split), checked.bad.bad, checked.bad.seen);
    files_ = std::move(checked.usable);
    if (files_.empty())
      throw DataError("[data] image_folder: the " + std::string(split_name(split)) + " split has no usable images");
    if (params.boolean("cache"))
      cache_.emplace(files_.size(), static_cast<std::size_t>(params.integer("cache_max_mb")) << 20);
  }

  DatasetInfo info() const override {
    return {channels_, height_, width_, static_cast<std::int64_t>(class_names_.size()), class_names_};
  }

  std::int64_t size() const override { return static_cast<std::int64_t>(files_.size()); }

  Example example(const SampleRequest& request) const override {
    const std::int64_t at = request.index;
    if (at < 0 || at >= size())
      throw std::out_of_range("image_folder: index " + std::to_string(at) + " is outside [0, " +
                              std::to_string(size()) + ")");
    return bad_reads_->read(request, size(), [&](std::int64_t i) {
      const LabelledFile& file = files_[static_cast<std::size_t>(i)];
      // Only the preprocessing's window is decoded, unless the image is first
      // resized to a fixed size or kept whole in the cache.
      if (height_ == 0 && !cache_ && request.window)
        return Example{orchestrate::decode_image(read_file_bytes(file.path), channels_, file.path, request.window,
                                                 max_pixels_),
                       file.label, /*windowed=*/true};
      // A fixed decode size needs both its sides.
      auto pixels = decoded(static_cast<std::size_t>(i), height_ > 0 ? std::max(height_, width_) : 0);
      if (height_ > 0) pixels = orchestrate::resize_pixels(pixels, height_, width_);
      return Example{pixels, file.label};
    });
  }

  // Every image is a file of its own.
  std::vector<std::int64_t> examples_per_file() const override { return std::vector<std::int64_t>(files_.size(), 1); }

 private:
  // uint8 [H, W, channels] of file `index`, from the cache when kept there.
  // min_side is the same for every call on a split, so a kept image is one
  // decoded the way this call would.
  at::Tensor decoded(std::size_t index, std::int64_t min_side) const {
    if (cache_)
      if (auto kept = cache_->find(index); kept.defined()) return kept;
    const std::string& path = files_[index].path;
    // What this throws names the path ("PATH: CAUSE"). Found only now when
    // verify_images = false let the file through, or when it changed after
    // the dataset was built; bad_reads_ applies the policy.
    const at::Tensor pixels = orchestrate::decode_image(read_file_bytes(path), channels_, path, min_side, max_pixels_);
    if (cache_) cache_->offer(index, pixels);
    return pixels;
  }

  std::int64_t channels_;
  std::int64_t height_;  // a fixed decode size; 0: as stored
  std::int64_t width_;
  std::int64_t max_pixels_;  // a larger image is refused from its header
  std::vector<std::string> class_names_;
  std::vector<LabelledFile> files_;  // only read after construction
  mutable std::optional<DecodedImageCache> cache_;  // thread-safe on its own
  std::optional<orchestrate::BadReads> bad_reads_;  // set in the constructor
};

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      string_param("root", "",
                   "the image folder: root/<class>/<image>, or root/train/<class>/ and root/val/<class>/ "
                   "(validation/ or test/ also serve as the evaluation folder); scripts/convert_dataset "
                   "image_folder writes one from IDX files")
          .existing_directory(),
      int_param("num_classes", 0,
                "the number of class folders the data must have (a different count is an error); 0: as many as "
                "there are")
          .at_least(0)
          .with_role(orchestrate::ParamRole::num_classes),
      real_param("val_fraction", 0.1,
                 "without a val folder: this fraction of each class's files (rounded, at least one, never all) is "
                 "the test split, chosen by a hash of split_seed and the file name")
          .between(0.0, 0.9),
      int_param("split_seed", 0, "seeds the val_fraction split; the same seed gives the same split everywhere")
          .at_least(0),
      bool_param("verify_images", true,
                 "decode every image when the dataset is built, so a bad file is found then; false: only zero-byte "
                 "files are found then, and another bad file fails the run when read"),
      int_param("limit", 0,
                "keep only N usable files of each split (0: all), taken from the classes in turn, for quick runs")
          .at_least(0),
      bool_param("cache", false,
                 "keep decoded images in memory after their first read (FastNN's datasets_use_caching), up to "
                 "cache_max_mb"),
      int_param("cache_max_mb", 2048, "the memory the decoded-image cache may use, in MiB; images past it are read again")
          .at_least(1),
      int_param("max_image_pixels", kDefaultMaxImagePixels,
                "the most pixels (width x height) an image's header may declare; a larger image is a bad file, "
                "refused before it is decoded (a decompression bomb); Pillow's MAX_IMAGE_PIXELS by default")
          .at_least(1),
  };
  add_decoded_image_params(schema);
  add_bad_data_params(schema,
                      "a bad file (zero bytes, not a JPEG or PNG whatever its name, an image that does not decode)",
                      "file", "its path and cause");
  schema.rule([](const Params& p) -> std::string {
    if (p.string("root").empty()) return "root: say where the image folder is";
    if (p.integer("num_classes") == 1) return "num_classes: at least 2 (or 0 to count the class folders)";
    return "";
  });
  registry.datasets().add(
      "image_folder", "a folder of JPEG/PNG images, one sub-folder per class (torchvision's ImageFolder layout)",
      std::move(schema),
      [](const Params& params, const DatasetContext& context) {
        return std::make_unique<ImageFolderDataset>(params, context);
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("image_folder", "1.0.0", register_components)
