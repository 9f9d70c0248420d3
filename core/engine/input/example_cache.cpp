#include "engine/input/example_cache.h"

namespace orchestrate {

ExampleCache::ExampleCache(std::int64_t examples, std::size_t max_bytes)
    : kept_(static_cast<std::size_t>(examples)), max_bytes_(max_bytes) {}

std::optional<Example> ExampleCache::find(std::int64_t index) const {
  const std::lock_guard lock(mutex_);
  const Example& kept = kept_.at(static_cast<std::size_t>(index));
  if (!kept.pixels.defined()) return std::nullopt;
  return kept;
}

void ExampleCache::offer(std::int64_t index, const Example& example) {
  const auto bytes = static_cast<std::size_t>(example.pixels.nbytes());
  const std::lock_guard lock(mutex_);
  Example& slot = kept_.at(static_cast<std::size_t>(index));
  if (slot.pixels.defined() || used_ + bytes > max_bytes_) return;
  slot = example;
  used_ += bytes;
}

std::size_t ExampleCache::bytes_used() const {
  const std::lock_guard lock(mutex_);
  return used_;
}

}  // namespace orchestrate
