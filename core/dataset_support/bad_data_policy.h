// What a dataset does with the bad items (records, files) it finds while
// indexing a split: on_corrupt = "fail" stops at the first, naming it;
// "skip" leaves them out and says how many, unless more than
// max_corrupt_fraction of the split is bad. One policy, so every dataset
// plugin words it the same way.
#pragma once

#include <cstddef>
#include <string>

#include "orchestrate/params.h"

namespace orchestrate {

struct BadDataPolicy {
  std::string dataset;  // the plugin, as messages name it: "[data] <dataset>: ..."
  std::string item;     // what is counted: "record", "file"
  std::string fix;      // how to get past a failure, ending the fail message
  bool skip = false;
  double max_fraction = 0.0;

  // on_corrupt and max_corrupt_fraction from the dataset's params.
  static BadDataPolicy from_params(const Params& params, std::string dataset, std::string item, std::string fix);
};

// Declares on_corrupt and max_corrupt_fraction in a dataset's schema.
// `bad_item` says what counts as bad ("a bad file (zero bytes, ...)"), `item`
// what is counted ("file"), `fail_names` what a failure names ("its path and cause").
void add_bad_data_params(ParamSchema& schema, const std::string& bad_item, const std::string& item,
                         const std::string& fail_names);

// Declares channels, height and width: what encoded images are decoded to,
// and an optional fixed size they are resized to (0: as stored), the same
// keys and rules in every image dataset.
void add_decoded_image_params(ParamSchema& schema);

struct BadDataCount {
  std::size_t bad = 0;
  std::size_t seen = 0;     // bad and usable together
  std::string first_bad;    // the first bad item, described: "FILE: ...: CAUSE"
};

// Throws DataError when the policy says the split cannot be used; with bad
// items skipped, prints the count to stderr.
void apply_bad_data_policy(const BadDataPolicy& policy, const BadDataCount& count, const std::string& split);

}  // namespace orchestrate
