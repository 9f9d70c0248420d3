// Which runs `orchestrate runs` lists and in what order: the filters and sort
// key of RunStore::find_runs. Every field left empty selects all runs.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace orchestrate {

// Every member has an initializer, so a filter may name only the fields it sets ({.status = "failed"}).
struct RunFilter {
  std::string name_glob{};  // a glob over the run name (SQLite GLOB: *, ?, [...]; case-sensitive)
  // running, finished, failed, interrupted or lost (a run stored as running
  // whose process is gone); anything else is a UsageError listing them.
  std::string status{};
  // A glob over the recipe path as given to `orchestrate run`, matching the
  // whole path or its end after a '/': "fashion_mnist.toml" matches
  // "recipes/fashion_mnist.toml" and "/home/me/recipes/fashion_mnist.toml".
  std::string recipe{};
  // Runs started at or after: a UTC date or time ("2026-11-22",
  // "2026-11-22T14:30", "2026-11-22 14:30:00"), or an age ("30m", "12h", "7d").
  std::string since{};
  std::vector<std::pair<std::string, std::string>> tags{};  // key=value; a run must have them all

  // "" (newest first), "id", "started", "duration", "name", "status", or any
  // final metric ("eval/top1"). Numbers, times and metrics sort highest
  // (newest, longest) first, words alphabetically; a run without the metric
  // comes last. `reverse` turns the order round (lowest loss first), runs
  // without the metric still last. A metric no selected run has is a
  // UsageError naming the metrics they have.
  std::string sort_by{};
  bool reverse = false;

  std::size_t limit = 0;  // the first N in that order; 0: all
};

}  // namespace orchestrate
