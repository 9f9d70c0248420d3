// Which files make up a split of an image folder, and their labels.
//
// root/train/<class>/... with root/val/ (or validation/, or test/, looked
// for in that order): the folders are the splits, and both must hold the
// same classes. Otherwise the classes are root/<class>/ (or root/train/<class>/
// when there is no val folder), and each class's files are split by
// val_fraction: see split_by_fraction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "orchestrate/dataset.h"

namespace orchestrate::image_folder {

struct LabelledFile {
  std::string path;
  std::int64_t label = 0;
};

struct SplitFiles {
  std::vector<std::string> class_names;  // the class folders' names, sorted
  std::vector<LabelledFile> files;       // by class, then by path within it
};

struct SplitRule {
  double val_fraction = 0.1;
  std::uint64_t seed = 0;
};

SplitFiles split_files(const std::string& root, DatasetSplit split, const SplitRule& rule);

// The val part of one class's `files` (sorted names, paths within the class
// folder): the round(n x fraction) files (at least 1, at most n - 1) that
// come first when the files are ordered by the 64-bit FNV-1a hash of the
// seed's 8 bytes (little-endian) followed by the file's name.
// A file's side depends only on its name, the seed and its class's size,
// never on the filesystem or the platform. Returned as indices into `files`, ascending.
std::vector<std::size_t> val_part(const std::vector<std::string>& files, double fraction, std::uint64_t seed);

}  // namespace orchestrate::image_folder
