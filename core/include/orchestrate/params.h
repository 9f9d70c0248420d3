// Parameter schemas and resolved parameter values.
//
// Every component declares a ParamSchema; the host validates the recipe table
// against it (unknown keys, missing keys, types, ranges, choices) and hands the
// component a Params holding exactly the declared keys, defaults filled in.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "orchestrate/api.h"

namespace orchestrate {

enum class ParamType { boolean, integer, real, string, integer_list, real_list, string_list };

ORCHESTRATE_API const char* to_string(ParamType type);

// What a key means to the host, for the few component keys the host itself
// reads: the base learning rate it schedules, and what a smoke run needs to
// stand mock data in for a dataset (its classes and channels) and to shrink
// a preprocessing's output. The host finds such a key by its role, never by
// its name, so a plugin names its keys as it likes. At most one key of a
// schema has each role, of the type the role needs (checked at load).
enum class ParamRole {
  none,
  learning_rate,   // optimizer: real, the base lr the schedule scales
  num_classes,     // dataset: integer, the class count (0 or less: not declared)
  class_list,      // dataset: a list with one entry per class (names, kept labels)
  image_channels,  // dataset: integer, 1 or 3
  image_height,    // dataset: integer, a fixed size of every example
  image_width,
  output_side,     // preprocessing: integer, the side of its square output
  resize_side,     // preprocessing: integer, an eval resize before the crop (0: none)
};

ORCHESTRATE_API const char* to_string(ParamRole role);
// Whether a key of `type` can have `role` (learning_rate: real; class_list:
// any list; the others: integer).
ORCHESTRATE_API bool role_fits(ParamRole role, ParamType type);

using ParamValue = std::variant<bool, std::int64_t, double, std::string, std::vector<std::int64_t>,
                                std::vector<double>, std::vector<std::string>>;

ORCHESTRATE_API std::string to_display(const ParamValue& value);  // TOML-like text
ORCHESTRATE_API ParamType type_of(const ParamValue& value);

// What a string key must name on disk when the recipe loads (a dataset's
// directory or files): checked by the host before anything is recorded, with
// the key's file:line (or its --set), exit code 2, for every dataset alike.
// An empty value names nothing and passes.
enum class PathCheck { none, existing_directory, existing_file };

struct ORCHESTRATE_API ParamSpec {
  std::string name;
  ParamType type = ParamType::string;
  std::string doc;
  std::optional<ParamValue> default_value;  // none: the key is required
  std::optional<double> min;                // numeric (and list element) bounds
  std::optional<double> max;
  bool min_exclusive = false;  // min itself is not allowed ("> min")
  bool max_exclusive = false;  // max itself is not allowed ("< max")
  std::vector<std::string> choices;  // allowed values of a string
  ParamRole role = ParamRole::none;  // what the host reads it as (see ParamRole)
  PathCheck must_exist = PathCheck::none;  // a string naming data (see PathCheck)
  // May differ between a checkpoint's recipe and the recipe that resumes it,
  // because it does not change the training trajectory (a log cadence, a
  // checkpoint interval); any other changed key refuses `--resume`.
  bool resume_safe = false;

  bool required() const { return !default_value.has_value(); }
  ParamSpec& at_least(double lower) { min = lower; min_exclusive = false; return *this; }
  ParamSpec& at_most(double upper) { max = upper; max_exclusive = false; return *this; }
  ParamSpec& greater_than(double lower) { min = lower; min_exclusive = true; return *this; }
  ParamSpec& less_than(double upper) { max = upper; max_exclusive = true; return *this; }
  ParamSpec& between(double lower, double upper) { return at_least(lower).at_most(upper); }
  ParamSpec& one_of(std::vector<std::string> allowed) { choices = std::move(allowed); return *this; }
  ParamSpec& with_role(ParamRole meaning) { role = meaning; return *this; }
  ParamSpec& existing_directory() { must_exist = PathCheck::existing_directory; return *this; }
  ParamSpec& existing_file() { must_exist = PathCheck::existing_file; return *this; }
  ParamSpec& safe_on_resume() { resume_safe = true; return *this; }
  // The reason `value` does not name what must_exist asks for, or "".
  std::string path_problem(const ParamValue& value) const;
  // The reason `value` is outside this spec's bounds or choices, or "" when it is fine.
  std::string check(const ParamValue& value) const;
  // The bounds as a person reads them: ">= 1", "> 0", "[0, 1)", or "" when unbounded.
  std::string range_text() const;
};

// Spec builders; pass std::nullopt as the default to make a key required.
ORCHESTRATE_API ParamSpec bool_param(std::string name, std::optional<bool> def, std::string doc);
ORCHESTRATE_API ParamSpec int_param(std::string name, std::optional<std::int64_t> def, std::string doc);
ORCHESTRATE_API ParamSpec real_param(std::string name, std::optional<double> def, std::string doc);
ORCHESTRATE_API ParamSpec string_param(std::string name, std::optional<std::string> def, std::string doc);
ORCHESTRATE_API ParamSpec int_list_param(std::string name, std::optional<std::vector<std::int64_t>> def, std::string doc);
ORCHESTRATE_API ParamSpec real_list_param(std::string name, std::optional<std::vector<double>> def, std::string doc);
ORCHESTRATE_API ParamSpec string_list_param(std::string name, std::optional<std::vector<std::string>> def, std::string doc);

class Params;

// A check that involves several keys (boundaries against factors): given
// values that passed every per-key check, the problem, or "" when fine.
using ParamRule = std::function<std::string(const Params&)>;

// What a component's recipe rule may read of the rest of the resolved recipe,
// read-only: the component each table names and its values, as the recipe
// resolved them (defaults filled in, --set applied).
class ORCHESTRATE_API RecipeView {
 public:
  virtual ~RecipeView();
  // The component table `table` names ("optimizer", "schedule", "data",
  // "model", "preprocessing", "gradient_compression"): its plugin, or ""
  // when the recipe has no such table.
  virtual std::string plugin(const std::string& table) const = 0;
  // That component's resolved values; null when the table names none.
  virtual const Params* params(const std::string& table) const = 0;
  // The optimizer's base learning rate (its learning_rate-role key).
  virtual double base_learning_rate() const = 0;
};

// A check of a component's values against the rest of the recipe (a
// schedule's end_lr against the optimizer's lr): given the component's own
// values and the recipe, the problem, or "" when fine. The host runs these
// when the recipe loads, after every table passed its own checks, so
// --dry-run reports them at the component's table, with its file:line:col.
using RecipeRule = std::function<std::string(const Params& own, const RecipeView& recipe)>;

class ORCHESTRATE_API ParamSchema {
 public:
  ParamSchema() = default;
  ParamSchema(std::initializer_list<ParamSpec> specs);

  ParamSchema& add(ParamSpec spec);  // a duplicate name is a programming error (throws)
  // The host runs rules when the recipe loads, so --dry-run finds what they
  // find and the error carries the table's file:line.
  ParamSchema& rule(ParamRule check);
  // A rule over this component and the rest of the recipe (RecipeRule).
  ParamSchema& recipe_rule(RecipeRule check);
  const std::vector<ParamSpec>& specs() const { return specs_; }
  const std::vector<ParamRule>& rules() const { return rules_; }
  const std::vector<RecipeRule>& recipe_rules() const { return recipe_rules_; }
  const ParamSpec* find(const std::string& name) const;
  // The key with `role`, or nullptr when the schema has none.
  const ParamSpec* find(ParamRole role) const;
  std::vector<std::string> names() const;
  // Every rule's problem, in declaration order.
  std::vector<std::string> broken_rules(const Params& params) const;

 private:
  std::vector<ParamSpec> specs_;
  std::vector<ParamRule> rules_;
  std::vector<RecipeRule> recipe_rules_;
};

// Resolved values, one per declared key.
class ORCHESTRATE_API Params {
 public:
  void set(const std::string& name, ParamValue value);
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  const std::map<std::string, ParamValue>& values() const { return values_; }

  bool boolean(const std::string& name) const;
  std::int64_t integer(const std::string& name) const;
  double real(const std::string& name) const;
  const std::string& string(const std::string& name) const;
  const std::vector<std::int64_t>& integer_list(const std::string& name) const;
  const std::vector<double>& real_list(const std::string& name) const;
  const std::vector<std::string>& string_list(const std::string& name) const;

 private:
  template <class T>
  const T& get(const std::string& name) const;
  std::map<std::string, ParamValue> values_;
};

// Every key at its default; throws orchestrate::Error naming the required keys
// that have none. For tests and tools; recipes go through the host's validation.
ORCHESTRATE_API Params default_params(const ParamSchema& schema);

}  // namespace orchestrate
