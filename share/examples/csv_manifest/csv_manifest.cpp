// A third-party dataset built only against the installed SDK: images listed
// in CSV manifests ("path,label" per line, paths relative to the manifest),
// decoded by orchestrate::image and screened by orchestrate::dataset_support's
// bad-data policy, so on_corrupt works as it does for image_folder.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrate/dataset.h"
#include "orchestrate/dataset_support/bad_data_policy.h"
#include "orchestrate/dataset_support/bad_reads.h"
#include "orchestrate/error.h"
#include "orchestrate/image/image_decode.h"
#include "orchestrate/image/image_transforms.h"
#include "orchestrate/plugin.h"

namespace {
using namespace orchestrate;

struct Row {
  std::string path;
  std::int64_t label;
};

std::vector<Row> read_manifest(const std::string& manifest) {
  std::ifstream in(manifest);
  if (!in) throw DataError("[data] csv_manifest: " + manifest + ": cannot be read");
  std::vector<Row> rows;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#' || line == "path,label") continue;
    const auto comma = line.rfind(',');
    try {
      if (comma == std::string::npos) throw std::invalid_argument("no comma");
      std::size_t used = 0;
      const std::int64_t label = std::stoll(line.substr(comma + 1), &used);
      if (used != line.size() - comma - 1 || label < 0) throw std::invalid_argument("label");
      rows.push_back({(std::filesystem::path(manifest).parent_path() / line.substr(0, comma)).string(), label});
    } catch (const std::exception&) {
      throw DataError("[data] csv_manifest: " + manifest + ":" + std::to_string(number) +
                      ": expected \"path,label\" with a label >= 0, got \"" + line + "\"");
    }
  }
  return rows;
}

class CsvManifest final : public Dataset {
 public:
  CsvManifest(const Params& params, const DatasetContext& context)
      : channels_(params.integer("channels")), height_(params.integer("height")), width_(params.integer("width")) {
    const std::string split = context.split == DatasetSplit::train ? "train" : "test";
    const auto policy = BadDataPolicy::from_params(
        params, "csv_manifest", "file", "fix or remove the file, or on_corrupt = \"skip\" leaves bad files out",
        context.events);
    BadDataCount bad;
    for (const auto& row : read_manifest(params.string(split))) {
      try {
        read_image(row.path, channels_);  // a bad file is found now, not mid-epoch
        rows_.push_back(row);
        num_classes_ = std::max(num_classes_, row.label + 1);
      } catch (const std::exception& error) {
        bad.add(error.what());  // "PATH: CAUSE"
      }
    }
    bad.seen = rows_.size() + bad.bad;
    apply_bad_data_policy(policy, bad, split);
    bad_reads_.emplace(policy, split, bad.bad, bad.seen);
    if (rows_.empty()) throw DataError("[data] csv_manifest: the " + split + " split has no usable images");
    num_classes_ = std::max(num_classes_, params.integer("num_classes"));
  }

  DatasetInfo info() const override { return {channels_, height_, width_, num_classes_, {}}; }
  std::int64_t size() const override { return static_cast<std::int64_t>(rows_.size()); }

  Example example(const SampleRequest& request) const override {
    if (request.index < 0 || request.index >= size()) throw std::out_of_range("csv_manifest: no such index");
    return bad_reads_->read(request, size(), [&](std::int64_t i) {
      auto pixels = read_image(rows_[i].path, channels_);
      if (height_ > 0) pixels = resize_pixels(pixels, height_, width_);
      return Example{pixels, rows_[i].label};
    });
  }

 private:
  std::int64_t channels_, height_, width_, num_classes_ = 2;
  std::vector<Row> rows_;
  std::optional<BadReads> bad_reads_;
};

void register_components(Registry& registry) {
  ParamSchema schema{
      string_param("train", std::nullopt, "CSV manifest of the train split: path,label per line"),
      string_param("test", std::nullopt, "CSV manifest of the test split"),
      int_param("num_classes", 0, "at least this many classes (0: the largest label + 1)").at_least(0),
  };
  add_decoded_image_params(schema);
  add_bad_data_params(schema, "a bad file (missing, not a JPEG or PNG, or one that does not decode)", "file",
                      "its path and cause");
  registry.datasets().add("csv_manifest", "images listed in CSV manifests (path,label)", std::move(schema),
                          [](const Params& params, const DatasetContext& context) {
                            return std::make_unique<CsvManifest>(params, context);
                          });
}
}  // namespace

ORCHESTRATE_PLUGIN("csv_manifest", "1.0.0", register_components)
