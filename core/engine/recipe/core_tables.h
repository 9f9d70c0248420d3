// The recipe's tables, declared once: which tables exist, which keys the core
// reads in each, which name a component (`plugin = "..."`), and which hold
// arrays of tables (`[[optimizer.wrappers]]`). Validation, --set, --dry-run,
// `describe recipe` and the resolved recipe all work from this one list, so
// a new table is one declaration here.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "orchestrate/params.h"
#include "orchestrate/registry.h"

namespace orchestrate {

inline constexpr std::int64_t kRecipeSchemaVersion = 1;

struct TableValues;

// A check over all entries of an array of tables (the wrapper chain's order):
// (entry index, problem) pairs; empty when fine.
using EntriesRule = std::function<std::vector<std::pair<std::size_t, std::string>>(const std::vector<TableValues>&,
                                                                                    const Registry&)>;

struct TableSpec {
  std::string name;  // "optimizer"; for a list entry, the list's key ("wrappers")
  std::string doc;   // one line, for `describe recipe`
  ParamSchema schema;  // the keys the core reads; may be empty
  std::optional<ComponentKind> kind;  // set: the table names a component of this kind
  std::string default_plugin;         // used when the table or its `plugin` is absent; "": required
  std::vector<TableSpec> lists;       // arrays of tables inside this one ([[name.list]])
  EntriesRule entries_rule;           // for a list: checks the entries together
  // Every key of the table, the component's own included, may change when a
  // run resumes ([[hooks]]: they watch training and never change it). The
  // core keys say so one by one otherwise (ParamSpec::resume_safe).
  bool every_key_resume_safe = false;
  // A top-level array of tables ([[hooks]]): each entry is resolved by this
  // spec, and the recipe keeps them as the list of the same name.
  bool is_array = false;
};

// Every top-level table, in the order a resolved recipe prints them.
const std::vector<TableSpec>& recipe_tables();

// The top-level table called `name`, or nullptr.
const TableSpec* find_table(const std::string& name);

std::vector<std::string> table_names();

// Whether a flattened recipe key ("log.progress", "optimizer.lr") may differ
// between a checkpoint's recipe and the recipe that resumes it: its spec's
// resume_safe, or its table's every_key_resume_safe.
bool resume_safe_key(const std::string& flattened_key);

}  // namespace orchestrate
