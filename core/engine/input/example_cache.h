// Decoded examples kept in memory after their first read (FastNN's
// datasets_use_caching), up to a byte budget, shared by the pipeline's
// threads. What is kept is the dataset's example, before the preprocessing's
// random augmentation, so a cached read gives exactly the pixels a fresh one
// does (a dataset's example depends on its index alone, dataset.h) and the
// augmentation still changes every epoch.
//
// When the budget is spent, later examples are not kept (nothing is
// evicted): with shuffled epochs every example is equally likely to be read
// next, so evicting would only trade one miss for another.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "orchestrate/dataset.h"

namespace orchestrate {

class ExampleCache {
 public:
  ExampleCache(std::int64_t examples, std::size_t max_bytes);

  // The example at `index`, when kept.
  std::optional<Example> find(std::int64_t index) const;
  // Keeps the example when the budget allows (its pixels' bytes).
  void offer(std::int64_t index, const Example& example);

  std::size_t bytes_used() const;

 private:
  mutable std::mutex mutex_;
  std::vector<Example> kept_;  // undefined pixels: not kept
  const std::size_t max_bytes_;
  std::size_t used_ = 0;
};

}  // namespace orchestrate
