// Bad items found only when an example is read mid-epoch (an image that
// indexing did not decode, a file changed since): the same on_corrupt policy
// as at indexing. "fail" throws one DataError naming the item; "skip" records
// it (once per item, a run event for each of the first kListedBadItems) and
// replaces the example with the next index that reads, so a batch keeps its
// size and the replacement is the same whatever the thread count. The bad
// items of a split, indexed and read, must stay within max_corrupt_fraction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "bad_data_policy.h"
#include "orchestrate/dataset.h"

namespace orchestrate {

class BadReads {
 public:
  // bad_when_indexed of seen_when_indexed items were already left out of the split.
  BadReads(BadDataPolicy policy, std::string split, std::size_t bad_when_indexed, std::size_t seen_when_indexed);

  // read(i) for request.index, in [0, size). An exception from read is a bad
  // item, its what() "FILE: ...: CAUSE".
  Example read(const SampleRequest& request, std::int64_t size,
               const std::function<Example(std::int64_t)>& read) const;

  // Distinct items found bad when read so far.
  std::size_t count() const;

 private:
  // Records index `at` as bad (once); throws when the policy says stop.
  void found(std::int64_t at, const SampleRequest& request, const std::string& cause) const;

  BadDataPolicy policy_;
  std::string split_;
  std::size_t bad_when_indexed_;
  std::size_t seen_when_indexed_;
  mutable std::mutex mutex_;
  mutable std::set<std::int64_t> bad_;  // indices found bad when read
};

}  // namespace orchestrate
