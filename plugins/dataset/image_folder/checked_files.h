// The usable files of a split: each file is checked once when the dataset
// is built (zero bytes; with verify_images, that it decodes as a JPEG or PNG,
// whatever its name says), and the bad ones are counted for the bad-data policy.
#pragma once

#include <cstdint>
#include <vector>

#include "orchestrate/dataset_support/bad_data_policy.h"
#include "orchestrate/image/image_limits.h"
#include "split_files.h"

namespace orchestrate::image_folder {

struct FileChecks {
  bool verify_images = true;
  std::int64_t channels = 3;  // what images decode to
  std::int64_t limit = 0;     // 0: every file
  std::int64_t max_image_pixels = kDefaultMaxImagePixels;
};

struct CheckedFiles {
  std::vector<LabelledFile> usable;  // in the order given
  BadDataCount bad;
};

// With a limit, files are taken one class at a time in turn (the first file
// of each class, then the second ...) until `limit` usable ones are found, so
// a quick run still sees every class; only those taken are checked.
CheckedFiles check_files(const std::vector<LabelledFile>& files, const FileChecks& checks);

// Why `path` is not a usable image, as "PATH: CAUSE", or "" when it is.
std::string why_unusable(const std::string& path, const FileChecks& checks);

}  // namespace orchestrate::image_folder
