// TFRecord files of tf.train.Example, as TensorFlow's image converters write
// them (ImageNet's build_imagenet_data.py, PAI FastNN's and MoXing's data),
// read with random access: the first run scans every file once, checking
// both CRCs, the Example and (by default) the image of every record, and
// caches where the usable records are; examples are then read at their
// offsets and decoded (libjpeg-turbo, libpng), at their stored size unless
// height and width fix one.
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "file_patterns.h"
#include "image_record.h"
#include "index_cache.h"
#include "orchestrate/dataset.h"
#include "orchestrate/dataset_support/bad_data_policy.h"
#include "orchestrate/dataset_support/bad_reads.h"
#include "orchestrate/error.h"
#include "orchestrate/image/image_transforms.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"
#include "orchestrate/tf_example/record_label.h"
#include "orchestrate/tfrecord/record_framing.h"
#include "split_index.h"

namespace {

using orchestrate::Example;
using orchestrate::SampleRequest;
using orchestrate::DataError;
using orchestrate::DatasetInfo;
using orchestrate::DatasetContext;
using orchestrate::DatasetSplit;
using orchestrate::Params;
using namespace orchestrate::tfrecord;

const char* split_name(DatasetSplit split) { return split == DatasetSplit::train ? "train" : "test"; }

std::vector<std::string> split_files(const Params& params, DatasetSplit split) {
  const std::string prefix = split_name(split);
  auto patterns = params.string_list(prefix + "_files");
  const std::string& dir = params.string("dir");
  if (patterns.empty()) {
    if (dir.empty())
      throw DataError("[data] tfrecord: no " + prefix + " files: set dir (its " + prefix + "_pattern files are read) or " +
                      prefix + "_files");
    patterns = {params.string(prefix + "_pattern")};
  }
  return expand_file_patterns(patterns, dir);
}

RecordRules rules_of(const Params& params) {
  RecordRules rules;
  rules.keys = {params.string("image_key"), params.string("format_key"), params.string("label_key")};
  rules.label_offset = params.integer("label_offset");
  // class_names alone declares the classes too: a label beyond them is a bad
  // record here, not a "Target out of bounds" in the loss.
  rules.num_classes = params.integer("num_classes");
  if (rules.num_classes == 0) rules.num_classes = static_cast<std::int64_t>(params.string_list("class_names").size());
  rules.verify_images = params.boolean("verify_images");
  rules.channels = params.integer("channels");
  rules.max_image_pixels = params.integer("max_image_pixels");
  return rules;
}

IndexCache index_cache_of(const Params& params) {
  const std::string& dir = params.string("index_cache_dir");
  if (dir == "off") return IndexCache("");
  return IndexCache(dir.empty() ? default_index_cache_dir() : dir);
}

SplitIndex index_files(const std::vector<std::string>& files, const RecordRules& rules, const IndexCache& cache,
                       DatasetSplit split) {
  auto index = index_split(files, rules, cache);
  // Before the "indexed" line, which it explains.
  if (index.damaged_cache_entries > 0)
    std::cerr << "[data] tfrecord: warning: a damaged index cache entry was ignored and its file indexed again: "
              << index.first_cache_damage
              << (index.damaged_cache_entries == 1
                      ? std::string()
                      : " (and " + std::to_string(index.damaged_cache_entries - 1) + " more)")
              << "\n";
  if (index.files_scanned > 0)
    std::cerr << "[data] tfrecord: indexed " << index.files_scanned << " " << split_name(split) << " file"
              << (index.files_scanned == 1 ? "" : "s")
              << (cache.dir().empty() ? " (index_cache_dir = \"off\": not cached)" : " (cached in " + cache.dir() + ")")
              << "\n";
  if (!index.cache_problem.empty())
    std::cerr << "[data] tfrecord: the index could not be cached (" << index.cache_problem
              << "); the next run scans again\n";
  return index;
}

orchestrate::BadDataCount bad_records(const SplitIndex& index) {
  orchestrate::BadDataCount count;
  for (const auto& bad : index.bad)
    count.add(describe_bad_record({index.files[bad.file], bad.record.index, bad.record.offset}, bad.record.cause),
              bad.record.region_bytes);
  count.seen = index.bad.size() + index.records.size();
  count.bytes = index.bytes;
  return count;
}

// With classes counted from the train split, a test record may name a class
// the model will not have: it is a bad record, like a label outside a
// declared num_classes (which indexing already refused).
void set_aside_unknown_classes(SplitIndex& index, std::int64_t num_classes, const std::string& label_key) {
  const auto known = [&](const SplitRecord& record) { return record.record.label < num_classes; };
  if (std::all_of(index.records.begin(), index.records.end(), known)) return;
  std::vector<SplitRecord> kept;
  for (const auto& record : index.records) {
    if (known(record)) {
      kept.push_back(record);
      continue;
    }
    const auto& [at, offset, data_bytes, label] = record.record;
    index.bad.push_back({record.file,
                         {at, offset, 0,
                          "label " + std::to_string(label) + " (" + label_key + ", less any label_offset) is outside [0, " +
                              std::to_string(num_classes) + "), the classes counted from the train split's labels; "
                              "set num_classes or class_names to declare more"}});
  }
  index.records = std::move(kept);
  std::sort(index.bad.begin(), index.bad.end(), [](const SplitBadRecord& a, const SplitBadRecord& b) {
    return std::tie(a.file, a.record.offset) < std::tie(b.file, b.record.offset);
  });
}

std::int64_t largest_label(const SplitIndex& index) {
  std::int64_t largest = -1;
  for (const auto& record : index.records) largest = std::max(largest, record.record.label);
  return largest;
}

class TfRecordDataset final : public orchestrate::Dataset {
 public:
  TfRecordDataset(const Params& params, const DatasetContext& context)
      : rules_(rules_of(params)),
        height_(params.integer("height")),
        width_(params.integer("width")),
        class_names_(params.string_list("class_names")) {
    const DatasetSplit split = context.split;
    const IndexCache cache = index_cache_of(params);
    index_ = index_files(split_files(params, split), rules_, cache, split);
    num_classes_ = count_classes(params, split, cache);  // over every record, whatever the limit
    if (num_classes_ > 0) set_aside_unknown_classes(index_, num_classes_, rules_.keys.label);
    const auto policy = orchestrate::BadDataPolicy::from_params(
        params, "tfrecord", "record", "on_corrupt = \"skip\" leaves bad records out", context.events);
    const auto bad = bad_records(index_);
    orchestrate::apply_bad_data_policy(policy, bad, split_name(split));
    bad_reads_.emplace(policy, split_name(split), bad.bad, bad.seen);
    if (index_.records.empty())
      throw DataError("[data] tfrecord: the " + std::string(split_name(split)) + " split has no usable records");
    if (const std::int64_t limit = params.integer("limit"); limit > 0 && limit < size())
      index_.records.resize(static_cast<std::size_t>(limit));
  }

  // A stream format: the host may read it nearly in file order through a shuffle buffer.
  DatasetInfo info() const override {
    return {rules_.channels, height_, width_, num_classes_, class_names_, /*sequential=*/true};
  }

  std::int64_t size() const override { return static_cast<std::int64_t>(index_.records.size()); }

  Example example(const SampleRequest& request) const override {
    const std::int64_t at = request.index;
    if (at < 0 || at >= size())
      throw std::out_of_range("tfrecord: index " + std::to_string(at) + " is outside [0, " + std::to_string(size()) +
                              ")");
    return bad_reads_->read(request, size(), [&](std::int64_t i) { return read_example(i, request.window); });
  }

  std::vector<std::int64_t> examples_per_file() const override {
    std::vector<std::int64_t> counts(index_.files.size(), 0);
    for (const auto& record : index_.records) ++counts[record.file];
    // Files with no usable record (or none left by limit) hold no index.
    std::erase(counts, 0);
    return counts;
  }

 private:
  // num_classes as given, else as many as class_names, else counted: the
  // largest label in the train split plus one, for both splits, so that a
  // test split that lacks the last class still agrees with the model.
  // Labels are below kMaxClasses (class_of_label), so the count cannot
  // overflow. 0 when there is no record to count from (the caller then
  // says the split has no usable records).
  std::int64_t count_classes(const Params& params, DatasetSplit split, const IndexCache& cache) const {
    if (rules_.num_classes > 0) return rules_.num_classes;
    std::int64_t largest = largest_label(index_);
    const bool train_files_given = !params.string_list("train_files").empty() || !params.string("dir").empty();
    if (split == DatasetSplit::test && train_files_given) {
      // Usually cached by now: the trainer builds the train split first.
      std::vector<std::string> train_files;
      try {
        train_files = split_files(params, DatasetSplit::train);
      } catch (const DataError&) {
        // No train split to count from (an evaluation-only file set): count this one.
      }
      if (!train_files.empty()) largest = largest_label(index_split(train_files, rules_, cache));
    }
    if (largest < 0) return 0;
    if (largest < 1)
      throw DataError("[data] tfrecord: every label is 0, so there is one class; set num_classes");
    return largest + 1;
  }

  // Example `at`; what a failure throws names the record ("FILE: record N at byte B: CAUSE").
  // Only `window` is decoded (see SampleRequest::window), unless the image
  // is resized to a fixed size first: that needs all of it.
  Example read_example(std::int64_t at, const orchestrate::ChooseWindow& window) const {
    const bool windowed = height_ == 0 && window;
    const auto& [file, record] = index_.records[static_cast<std::size_t>(at)];
    const RecordPlace place{index_.files[file], record.index, record.offset};
    // Opened per example, not kept: no state shared between pipeline
    // threads, and no limit on open files however many shards there are.
    at::Tensor pixels;
    try {
      RecordFile reader(place.file);
      const ImageRecord image = read_image_record(reader.read_at(place, record.data_bytes), rules_);
      // A fixed decode size needs both its sides.
      pixels = decode_record_image(
          image, rules_, windowed ? window : orchestrate::whole_image_chooser(height_ > 0 ? std::max(height_, width_) : 0));
    } catch (const RecordError&) {
      throw;  // names the record already
    } catch (const std::exception& error) {
      // Found only now when verify_images = false let the image through
      // indexing, or when the file changed since.
      throw std::runtime_error(describe_bad_record(place, error.what()));
    }
    if (height_ > 0) pixels = orchestrate::resize_pixels(pixels, height_, width_);
    return {pixels, record.label, windowed};
  }

  RecordRules rules_;
  std::int64_t height_;  // a fixed decode size; 0: as stored
  std::int64_t width_;
  std::vector<std::string> class_names_;
  std::int64_t num_classes_ = 0;
  SplitIndex index_;  // only read after construction
  std::optional<orchestrate::BadReads> bad_reads_;  // set in the constructor
};

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      string_param("dir", "",
                   "directory of the TFRecord files of tf.train.Example images: the train split is its "
                   "train_pattern files, the test split its test_pattern files (TensorFlow's ImageNet converter "
                   "names them train-00000-of-01024, validation-00000-of-00128); relative train_files and "
                   "test_files are taken under it too (scripts/convert_dataset tfrecord writes such files from IDX "
                   "files)")
          .existing_directory(),
      string_param("train_pattern", "train-*",
                   "glob of the train files in dir (ImageNet's converter writes train-00000-of-01024 ...)"),
      string_param("test_pattern", "validation-*",
                   "glob of the test files in dir (ImageNet's converter writes validation-00000-of-00128 ...)"),
      string_list_param("train_files", std::vector<std::string>{},
                        "train files, each a path or a glob; set, they replace dir's train_pattern"),
      string_list_param("test_files", std::vector<std::string>{},
                        "test files, each a path or a glob; set, they replace dir's test_pattern"),
      string_param("image_key", "image/encoded", "the Example feature holding the encoded JPEG or PNG (bytes_list)"),
      string_param("format_key", "image/format",
                   "the Example feature naming the image format (bytes_list; optional in the data); JPEG and PNG "
                   "are read, anything else is a bad record"),
      string_param("label_key", "image/class/label", "the Example feature holding the class (int64_list)"),
      int_param("label_offset", 0,
                "subtracted from every stored label (MoXing's labels_offset): 1 for ImageNet TFRecords whose "
                "class 0 is 'background'"),
      int_param("num_classes", 0,
                "number of classes; a label outside [0, num_classes) is a bad record. 0: as many as class_names, "
                "else the train split's largest label plus one (a label of " +
                    std::to_string(kMaxClasses) + " or more is then a bad record)")
          .between(0, static_cast<double>(kMaxClasses))
          .with_role(orchestrate::ParamRole::num_classes),
      string_list_param("class_names", std::vector<std::string>{}, "names of classes 0, 1, ... (optional)")
          .with_role(orchestrate::ParamRole::class_list),
      bool_param("verify_images", true,
                 "decode every image when a file is first indexed, so an undecodable image is a bad record then; "
                 "false: only CRCs, features and labels are checked, and a bad image fails the run when read"),
      string_param("index_cache_dir", "",
                   "where record indexes are cached between runs (keyed by path, size and mtime); \"\": "
                   "$ORCHESTRATE_CACHE/tfrecord-index or ~/.cache/orchestrate/tfrecord-index; \"off\": never"),
      int_param("limit", 0, "keep only the first N usable records of each split (0: all), for quick runs").at_least(0),
      int_param("max_image_pixels", kDefaultMaxImagePixels,
                "the most pixels (width x height) an image's header may declare; a larger image is a bad record, "
                "refused before it is decoded (a decompression bomb); Pillow's MAX_IMAGE_PIXELS by default")
          .at_least(1),
  };
  add_decoded_image_params(schema);
  add_bad_data_params(schema,
                      "a bad record (CRC, truncation, no such feature, an image that does not decode, a label out "
                      "of range)",
                      "record", "its file, record and cause");
  schema.rule([](const Params& p) -> std::string {
    if (p.integer("num_classes") == 1) return "num_classes: at least 2 (or 0 to count them)";
    const auto names = p.string_list("class_names").size();
    if (names == 1) return "class_names: name at least two classes";
    if (names > 0 && p.integer("num_classes") > 0 && static_cast<std::int64_t>(names) != p.integer("num_classes"))
      return "class_names: " + std::to_string(names) + " names for num_classes = " +
             std::to_string(p.integer("num_classes"));
    if (p.string("dir").empty() && p.string_list("train_files").empty())
      return "dir or train_files: say where the TFRecord files are";
    return "";
  });
  registry.datasets().add(
      "tfrecord", "TFRecord files of tf.train.Example images (JPEG/PNG) and labels, with a cached record index",
      std::move(schema),
      [](const Params& params, const DatasetContext& context) { return std::make_unique<TfRecordDataset>(params, context); });
}

}  // namespace

ORCHESTRATE_PLUGIN("tfrecord", "1.0.0", register_components)
