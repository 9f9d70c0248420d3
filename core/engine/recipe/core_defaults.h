// Every core recipe key's default, taken from its spec (core_settings_tables.h),
// for each reader that meets a recipe without the key: a run recorded before
// the key existed (the verdict, regressions, compare), a recipe read before
// validation fills it in (a smoke run), a command's own defaults (`export
// serving`). Free of LibTorch, so the front end's reports and the engine read
// the same specs, and no reader writes a default of its own.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "orchestrate/params.h"

namespace orchestrate {

class CoreDefaults {
 public:
  // The specs as built: each core table's keys, and the plugin a component
  // table names when the recipe names none ("schedule.plugin" = "fixed").
  static const CoreDefaults& builtin();

  // A copy with `key` ("run.prefetch_batches") defaulting to `value`: a test
  // changes a default this way and sees every reader follow. Throws Error for
  // a key that is not a core key or a value of another type.
  CoreDefaults with(const std::string& key, ParamValue value) const;

  // The default of `key`; throws Error naming it when it is not a core key.
  const ParamValue& value(const std::string& key) const;
  std::int64_t integer(const std::string& key) const;
  double number(const std::string& key) const;  // an integer or a real key
  const std::string& string(const std::string& key) const;

  // One table's keys at their defaults, as its settings reader takes them.
  Params table(const std::string& table) const;

  // As the run store keeps a value: a string bare, anything else as TOML (to_display).
  std::string stored_text(const std::string& key) const;

  // `stored`, a run's flattened params ("run.num_workers" -> "2"), by key,
  // with every core key it lacks added at its default.
  std::map<std::string, std::string> complete(const std::vector<std::pair<std::string, std::string>>& stored) const;

  // Every default as a TOML document, one [table] each, for the readers
  // that flatten a stored recipe's TOML (compare).
  std::string toml() const;

 private:
  std::map<std::string, ParamValue> values_;  // "table.key" -> default
};

}  // namespace orchestrate
