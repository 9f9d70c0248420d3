#include "bad_reads.h"

#include <exception>
#include <utility>

#include "orchestrate/error.h"

namespace orchestrate {

BadReads::BadReads(BadDataPolicy policy, std::string split, std::size_t bad_when_indexed, std::size_t seen_when_indexed)
    : policy_(std::move(policy)),
      split_(std::move(split)),
      bad_when_indexed_(bad_when_indexed),
      seen_when_indexed_(seen_when_indexed) {}

std::size_t BadReads::count() const {
  std::lock_guard lock(mutex_);
  return bad_.size();
}

Example BadReads::read(const SampleRequest& request, std::int64_t size,
                       const std::function<Example(std::int64_t)>& read) const {
  // Every index is tried at most once, so a split with every item bad ends
  // (at the fraction check, or here) instead of looping.
  for (std::int64_t tried = 0, at = request.index; tried < size; ++tried, at = (at + 1) % size) {
    try {
      return read(at);
    } catch (const std::exception& error) {
      found(at, request, error.what());
    }
  }
  throw DataError(policy_.prefix() + "no example of the " + split_ + " split can be read");
}

void BadReads::found(std::int64_t at, const SampleRequest& request, const std::string& cause) const {
  if (!policy_.skip)
    throw DataError(policy_.prefix() + cause + " (found when read, in the " + split_ + " split; " + policy_.fix + ")");
  std::size_t bad_read = 0;
  {
    std::lock_guard lock(mutex_);
    if (!bad_.insert(at).second) return;  // known: replaced again, recorded once
    bad_read = bad_.size();
  }
  policy_.check_fraction(bad_when_indexed_ + bad_read, seen_when_indexed_, split_, "the latest, found when read",
                         cause);
  if (bad_read <= kListedBadItems)
    policy_.report(split_ + " split: skipped " + cause + " (found when read in epoch " +
                   std::to_string(request.epoch + 1) + "; example " + std::to_string(at) + " replaced by the next one that reads)" +
                   (bad_read == kListedBadItems ? "; further bad items found when read are not listed" : ""));
}

}  // namespace orchestrate
