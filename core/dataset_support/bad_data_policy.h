// What a dataset does with the bad items (records, files) it finds while
// indexing a split: on_corrupt = "fail" stops at the first, naming it;
// "skip" leaves them out and says how many, unless more than
// max_corrupt_fraction of the split is bad. Skipped items become run events
// (each of the first kListedBadItems, then one summary per split), so a run
// says which data it did not train on. One policy, so every dataset plugin
// words it the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "orchestrate/dataset.h"
#include "orchestrate/params.h"

namespace orchestrate {

struct BadDataPolicy {
  std::string dataset;  // the plugin, as messages name it: "[data] <dataset>: ..."
  std::string item;     // what is counted: "record", "file"
  std::string fix;      // how to get past a failure, ending the fail message
  bool skip = false;
  double max_fraction = 0.0;
  DataEventSink* events = nullptr;  // the run's, or null (stderr only)

  // on_corrupt and max_corrupt_fraction from the dataset's params.
  static BadDataPolicy from_params(const Params& params, std::string dataset, std::string item, std::string fix,
                                   DataEventSink* events);

  // "[data] <dataset>: "
  std::string prefix() const;
  // "3 bad records of 120 in the train split"
  std::string counted(std::size_t bad, std::size_t seen, const std::string& split) const;
  // Throws DataError when `bad` of `seen` is more than max_fraction; `latest` names one of them.
  void check_fraction(std::size_t bad, std::size_t seen, const std::string& split, const std::string& which,
                      const std::string& latest) const;
  // The same for bytes: `lost` of a split's `total` bytes in damaged
  // regions. A region may hide any number of items and counts as one, but
  // its bytes are known exactly, so a split that lost much of its data
  // fails here even when its item count looks small.
  void check_byte_fraction(std::uint64_t lost, std::uint64_t total, const std::string& split,
                           const std::string& which, const std::string& latest) const;
  // A run event of kind "bad_data", when there is a run; `also_print`: the
  // same line on stderr too (summaries; not each of a list the summary counts).
  void report(const std::string& message, bool also_print = true) const;
};

// Bad items listed one by one in a split's events; the rest are only counted.
inline constexpr std::size_t kListedBadItems = 20;

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
  std::size_t seen = 0;             // bad and usable together
  std::vector<std::string> listed;  // the first kListedBadItems bad items, described: "FILE: ...: CAUSE"
  // For datasets whose files can hold damaged regions (a TFRecord file
  // after a bad length): each counts as one bad item, however many items it
  // hid, and its bytes are counted here. `bytes`: of the whole split (0:
  // bytes are not counted).
  std::uint64_t region_bytes = 0;
  std::uint64_t bytes = 0;
  std::string first_region;  // described, as in `listed`
  void add(std::string described, std::uint64_t damaged_region_bytes = 0) {
    if (damaged_region_bytes > 0) {
      if (first_region.empty()) first_region = described;
      region_bytes += damaged_region_bytes;
    }
    if (bad++ < kListedBadItems) listed.push_back(std::move(described));
  }
};

// Throws DataError when the policy says the split cannot be used; with bad
// items skipped, reports each listed one and a summary (see report()).
void apply_bad_data_policy(const BadDataPolicy& policy, const BadDataCount& count, const std::string& split);

}  // namespace orchestrate
