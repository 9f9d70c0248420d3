#include "split_files.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "class_folders.h"
#include "folder_listing.h"
#include "orchestrate/error.h"

namespace orchestrate::image_folder {

namespace {

// FNV-1a, written out because std::hash differs between standard libraries
// and a split must not change with the platform.
std::uint64_t fnv1a(std::uint64_t seed, const std::string& name) {
  std::uint64_t hash = 14695981039346656037ull;
  const auto mix = [&](unsigned char byte) {
    hash ^= byte;
    hash *= 1099511628211ull;
  };
  for (int i = 0; i < 8; ++i) mix(static_cast<unsigned char>(seed >> (8 * i)));
  for (const unsigned char c : name) mix(c);
  return hash;
}

const char* const kEvalFolders[] = {"val", "validation", "test"};

std::string find_eval_folder(const std::vector<std::string>& directories) {
  for (const char* name : kEvalFolders)
    if (std::binary_search(directories.begin(), directories.end(), std::string(name))) return name;
  return "";
}

std::vector<std::string> names_of(const std::vector<ClassFolder>& classes) {
  std::vector<std::string> names;
  for (const auto& folder : classes) names.push_back(folder.name);
  return names;
}

// The first class of `a` that `b` lacks, or "".
std::string first_missing(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const auto& name : a)
    if (!std::binary_search(b.begin(), b.end(), name)) return name;
  return "";
}

SplitFiles from_split_folders(const std::string& root, const std::string& eval, DatasetSplit split) {
  const std::string train_dir = join_path(root, "train"), eval_dir = join_path(root, eval);
  const auto train = read_class_folders(train_dir);
  const auto evaluation = read_class_folders(eval_dir);
  const auto train_names = names_of(train), eval_names = names_of(evaluation);
  if (const auto missing = first_missing(train_names, eval_names); !missing.empty())
    throw DataError("[data] image_folder: class '" + missing + "' is in " + train_dir + " but not in " + eval_dir +
                    "; both splits need a folder for every class");
  if (const auto missing = first_missing(eval_names, train_names); !missing.empty())
    throw DataError("[data] image_folder: class '" + missing + "' is in " + eval_dir + " but not in " + train_dir +
                    "; both splits need a folder for every class");
  SplitFiles out{train_names, {}};
  const auto& classes = split == DatasetSplit::train ? train : evaluation;
  for (std::size_t label = 0; label < classes.size(); ++label)
    for (const auto& file : classes[label].files)
      out.files.push_back({join_path(classes[label].dir, file), static_cast<std::int64_t>(label)});
  return out;
}

SplitFiles by_fraction(const std::string& dir, DatasetSplit split, const SplitRule& rule) {
  if (rule.val_fraction <= 0)
    throw DataError("[data] image_folder: " + dir +
                    " has no val, validation or test folder to evaluate on, and val_fraction = 0; add one beside "
                    "train/, or set val_fraction");
  const auto classes = read_class_folders(dir);
  SplitFiles out{names_of(classes), {}};
  for (std::size_t label = 0; label < classes.size(); ++label) {
    const auto& folder = classes[label];
    if (folder.files.size() < 2)
      throw DataError("[data] image_folder: class folder " + folder.dir +
                      " holds 1 file; a val_fraction split needs at least 2 per class");
    const auto val = val_part(folder.files, rule.val_fraction, rule.seed);
    std::vector<bool> in_val(folder.files.size(), false);
    for (const auto i : val) in_val[i] = true;
    for (std::size_t i = 0; i < folder.files.size(); ++i)
      if (in_val[i] == (split == DatasetSplit::test))
        out.files.push_back({join_path(folder.dir, folder.files[i]), static_cast<std::int64_t>(label)});
  }
  return out;
}

}  // namespace

std::vector<std::size_t> val_part(const std::vector<std::string>& files, double fraction, std::uint64_t seed) {
  const std::size_t n = files.size();
  const auto wanted = static_cast<std::size_t>(std::llround(static_cast<double>(n) * fraction));
  const std::size_t count = std::clamp<std::size_t>(wanted, 1, n - 1);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  // Ties (equal hashes) fall back to the name order, so the order is total.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return fnv1a(seed, files[a]) < fnv1a(seed, files[b]); });
  order.resize(count);
  std::sort(order.begin(), order.end());
  return order;
}

SplitFiles split_files(const std::string& root, DatasetSplit split, const SplitRule& rule) {
  if (!is_directory(root))
    throw DataError("[data] image_folder: " + root +
                    ": no such directory; set [data] root to the folder holding the class folders (or train/ and val/)");
  const auto directories = list_directory(root).directories;
  const bool has_train = std::binary_search(directories.begin(), directories.end(), std::string("train"));
  const std::string eval = find_eval_folder(directories);
  if (has_train && !eval.empty()) return from_split_folders(root, eval, split);
  if (!eval.empty())
    throw DataError("[data] image_folder: " + root + " has a " + eval +
                    " folder but no train folder; put the training images in " + join_path(root, "train") +
                    "/<class>/");
  return by_fraction(has_train ? join_path(root, "train") : root, split, rule);
}

}  // namespace orchestrate::image_folder
