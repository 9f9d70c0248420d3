#include "sweep/sweep_spec.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "engine/recipe/core_settings_tables.h"
#include "limits/checked_toml.h"
#include "limits/nesting_check.h"
#include "orchestrate/closest_match.h"
#include "orchestrate/error.h"
#include "orchestrate/input_limits.h"
#include "sweep/toml_value_text.h"

namespace orchestrate::sweep {

namespace {

const std::vector<std::string> kSweepKeys{"recipe",      "name",    "metric", "mode",  "trials", "sampler",
                                          "concurrency", "threads", "gpus",   "nproc", "seed",   "parameters",
                                          "early_stopping", "executor", "slurm"};
const std::vector<std::string> kEarlyStoppingKeys{"scheduler", "rung", "grace", "reduction_factor", "min_samples"};
const std::vector<std::string> kSlurmKeys{"partition", "time", "sbatch"};
const std::vector<std::string> kRangeKinds{"range", "log", "int", "choices"};

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// Collects every problem, each at its node's line and column.
class Problems {
 public:
  explicit Problems(std::string path) : path_(std::move(path)) {}

  std::string where(const toml::source_region& source) const {
    return path_ + ":" + std::to_string(source.begin.line) + ":" + std::to_string(source.begin.column);
  }
  std::string where(const toml::node& node) const { return where(node.source()); }
  void add(const toml::node& node, const std::string& what) { lines_.push_back(where(node) + ": " + what); }
  void add(const toml::key& key, const std::string& what) { lines_.push_back(where(key.source()) + ": " + what); }
  void add(const std::string& what) { lines_.push_back(path_ + ": " + what); }
  void add_at(const std::string& where, const std::string& what) { lines_.push_back(where + ": " + what); }
  bool empty() const { return lines_.empty(); }

  [[noreturn]] void raise() const {
    std::string text;
    const std::size_t shown = std::min(lines_.size(), limits::kMaxErrorLines);
    for (std::size_t i = 0; i < shown; ++i) text += (i ? "\n" : "") + lines_[i];
    if (lines_.size() > shown) text += "\n(" + std::to_string(lines_.size() - shown) + " more problems)";
    throw RecipeError(text);
  }

 private:
  std::string path_;
  std::vector<std::string> lines_;
};

void check_keys(const toml::table& table, const std::vector<std::string>& known, const std::string& label,
                Problems& problems) {
  for (const auto& [key, node] : table) {
    (void)node;
    const std::string name(key.str());
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    const std::string near = closest_match(name, known);
    problems.add(key, "unknown key '" + name + "' in " + label +
                          (near.empty() ? "" : "; did you mean '" + near + "'?") +
                           " (known: " + joined(known) + ")");
  }
}

std::optional<std::string> string_at(const toml::table& table, const std::string& key, Problems& problems) {
  const toml::node* node = table.get(key);
  if (!node) return std::nullopt;
  if (const auto text = node->value_exact<std::string>()) return *text;
  problems.add(*node, key + " must be a string");
  return std::nullopt;
}

std::optional<std::int64_t> integer_at(const toml::table& table, const std::string& key, std::int64_t low,
                                       std::int64_t high, Problems& problems) {
  const toml::node* node = table.get(key);
  if (!node) return std::nullopt;
  const auto value = node->value_exact<std::int64_t>();
  if (!value || *value < low || *value > high) {
    problems.add(*node, key + " must be an integer from " + std::to_string(low) + " to " + std::to_string(high));
    return std::nullopt;
  }
  return *value;
}

template <class Enum>
std::optional<Enum> choice_at(const toml::table& table, const std::string& key,
                              const std::vector<std::pair<std::string, Enum>>& choices, Problems& problems) {
  const auto text = string_at(table, key, problems);
  if (!text) return std::nullopt;
  std::vector<std::string> names;
  for (const auto& [name, value] : choices) {
    if (name == *text) return value;
    names.push_back("\"" + name + "\"");
  }
  problems.add(*table.get(key), key + " = \"" + *text + "\" is not one of " + joined(names));
  return std::nullopt;
}

// A value as TOML text, for a --set and for people: 0.1 (the shortest text
// that reads back as the same double), "fp32", [1, 2]. toml++'s own printer
// writes 0.1 as 0.10000000000000001 and strings in single quotes.
std::string toml_text(const toml::node& node) {
  if (const auto flag = node.value_exact<bool>()) return *flag ? "true" : "false";
  if (const auto integer = node.value_exact<std::int64_t>()) return std::to_string(*integer);
  if (const auto real = node.value_exact<double>()) return real_text(*real);
  if (const auto text = node.value_exact<std::string>()) return quoted(*text);
  if (const toml::array* items = node.as_array()) {
    std::string out = "[";
    for (std::size_t i = 0; i < items->size(); ++i) out += (i ? ", " : "") + toml_text((*items)[i]);
    return out + "]";
  }
  std::ostringstream out;  // a table or a date: toml++'s printer
  node.visit([&](const auto& value) { out << value; });
  return out.str();
}

std::optional<double> number_of(const toml::node& node) {
  if (const auto integer = node.value_exact<std::int64_t>()) return static_cast<double>(*integer);
  if (const auto real = node.value_exact<double>(); real && std::isfinite(*real)) return *real;
  return std::nullopt;
}

// { range = [a, b] }, { log = [a, b] }, { int = [a, b] } or { choices = [...] }.
void read_distribution(Parameter& parameter, const toml::table& table, Problems& problems) {
  if (table.size() != 1) {
    problems.add(table, parameter.key + ": give one of " + joined(kRangeKinds) + ", e.g. { log = [0.001, 0.1] }");
    return;
  }
  // The iterator kept: toml++'s yields a reference into itself, which a
  // temporary iterator would leave dangling (fuzzing found it).
  const auto first = table.begin();
  const auto& [kind_key, node] = *first;
  const std::string kind(kind_key.str());
  const toml::array* items = node.as_array();
  if (!items) {
    problems.add(node, parameter.key + ": " + kind + " takes an array");
    return;
  }
  if (kind == "choices") {
    if (items->empty()) problems.add(node, parameter.key + ": choices is empty; give at least one value");
    for (const auto& item : *items) parameter.values.push_back(toml_text(item));
    return;
  }
  const std::optional<double> low = items->size() == 2 ? number_of((*items)[0]) : std::nullopt;
  const std::optional<double> high = items->size() == 2 ? number_of((*items)[1]) : std::nullopt;
  if (!low || !high) {
    problems.add(node, parameter.key + ": " + kind + " takes two finite numbers, [low, high]");
    return;
  }
  Range range{*low, *high, kind == "log" ? Scale::log : kind == "int" ? Scale::integer : Scale::linear};
  if (range.scale == Scale::integer &&
      (!(*items)[0].is_integer() || !(*items)[1].is_integer() || std::abs(range.low) > 1e15 ||
       std::abs(range.high) > 1e15)) {
    problems.add(node, parameter.key + ": int takes two integers, [low, high]");
    return;
  }
  if (!(range.low < range.high) && !(range.scale == Scale::integer && range.low == range.high)) {
    problems.add(node, parameter.key + ": the range [" + toml_text((*items)[0]) + ", " + toml_text((*items)[1]) +
                           "] is empty; low must be below high");
    return;
  }
  if (range.scale == Scale::log && range.low <= 0) {
    problems.add(node, parameter.key + ": a log range must stay above 0, but it starts at " + toml_text((*items)[0]) +
                           "; give a positive low, or use range = [...]");
    return;
  }
  parameter.range = range;
}

// The [sweep.parameters] table, its keys flattened: "optimizer.lr" and
// optimizer = { lr = ... } both name optimizer.lr.
void read_parameters(const toml::table& table, const std::string& prefix, std::vector<Parameter>& out,
                     Problems& problems) {
  for (const auto& [key_part, node] : table) {
    const std::string key = prefix + std::string(key_part.str());
    if (const toml::table* inner = node.as_table()) {
      const std::string first_key = inner->empty() ? "" : std::string(inner->begin()->first.str());
      const bool distribution = std::find(kRangeKinds.begin(), kRangeKinds.end(), first_key) != kRangeKinds.end();
      if (inner->empty()) {  // names no key and no distribution (fuzzing found it sampling nothing)
        problems.add(node, key + ": an empty table; give a list of values ([0.1, 0.2]) or a distribution "
                                 "({ log = [0.001, 0.1] })");
        continue;
      }
      if (!distribution) {
        read_parameters(*inner, key + ".", out, problems);
        continue;
      }
    }
    Parameter parameter{key, {}, std::nullopt, problems.where(node)};
    if (key.find('.') == std::string::npos || key.front() == '.' || key.back() == '.') {
      problems.add(key_part, "'" + key + "' is not a recipe key: name its table too, e.g. \"optimizer.lr\"");
      continue;
    }
    if (const toml::array* items = node.as_array()) {
      if (items->empty()) problems.add(node, key + ": the list is empty; give at least one value");
      for (const auto& item : *items) parameter.values.push_back(toml_text(item));
    } else if (const toml::table* inner = node.as_table()) {
      read_distribution(parameter, *inner, problems);
    } else {
      problems.add(node, key + ": give a list of values ([0.1, 0.2]) or a distribution ({ log = [0.001, 0.1] })");
      continue;
    }
    for (const auto& existing : out)
      if (existing.key == key) problems.add(node, key + " is given twice (also at " + existing.where + ")");
    out.push_back(std::move(parameter));
  }
}

void read_early_stopping(const toml::table& table, EarlyStopping& stopping, Problems& problems) {
  check_keys(table, kEarlyStoppingKeys, "[sweep.early_stopping]", problems);
  if (auto scheduler = choice_at<Scheduler>(
          table, "scheduler", {{"asha", Scheduler::asha}, {"median", Scheduler::median}, {"none", Scheduler::none}},
          problems))
    stopping.scheduler = *scheduler;
  if (auto unit =
          choice_at<RungUnit>(table, "rung", {{"epochs", RungUnit::epochs}, {"steps", RungUnit::steps}}, problems))
    stopping.unit = *unit;
  if (auto grace = integer_at(table, "grace", 1, 1000000000, problems)) stopping.grace = *grace;
  if (auto factor = integer_at(table, "reduction_factor", 2, 100, problems)) stopping.reduction_factor = *factor;
  if (auto samples = integer_at(table, "min_samples", 1, 1000000, problems)) stopping.min_samples = *samples;
}

void read_slurm(const toml::table& table, SlurmSettings& slurm, Problems& problems) {
  check_keys(table, kSlurmKeys, "[sweep.slurm]", problems);
  if (auto partition = string_at(table, "partition", problems)) slurm.partition = *partition;
  if (auto time = string_at(table, "time", problems)) slurm.time = *time;
  const toml::node* sbatch = table.get("sbatch");
  if (!sbatch) return;
  const toml::array* options = sbatch->as_array();
  if (!options) {
    problems.add(*sbatch, "sbatch must be a list of sbatch options, e.g. [\"--account=ml\"]");
    return;
  }
  for (const auto& option : *options) {
    const auto text = option.value_exact<std::string>();
    if (!text || text->rfind("--", 0) != 0 || text->find('\n') != std::string::npos)
      problems.add(option, "sbatch: each option is one string that starts with --, e.g. \"--account=ml\"");
    else
      slurm.sbatch.push_back(*text);
  }
}

// Combinations of a grid, or kMaxTrials + 1 once it passes that.
std::int64_t grid_size(const std::vector<Parameter>& parameters) {
  std::int64_t size = 1;
  for (const auto& parameter : parameters) {
    size *= std::max<std::int64_t>(1, static_cast<std::int64_t>(parameter.values.size()));
    if (size > kMaxTrials) return kMaxTrials + 1;
  }
  return size;
}

void resolve_sampling(const toml::table& sweep, SweepSpec& spec, Problems& problems) {
  bool all_lists = true;
  for (const auto& parameter : spec.parameters) all_lists = all_lists && !parameter.range;
  spec.sampler = all_lists ? Sampler::grid : Sampler::random;
  if (auto sampler = choice_at<Sampler>(
          sweep, "sampler", {{"grid", Sampler::grid}, {"random", Sampler::random}, {"sobol", Sampler::sobol}},
          problems))
    spec.sampler = *sampler;
  const auto trials = integer_at(sweep, "trials", 1, kMaxTrials, problems);
  if (spec.sampler == Sampler::grid) {
    for (const auto& parameter : spec.parameters)
      if (parameter.range)
        problems.add_at(parameter.where, parameter.key +
                     " is a range, which a grid cannot enumerate: give its values as a list, or sampler = \"random\"");
    const std::int64_t size = grid_size(spec.parameters);
    if (size > kMaxTrials)
      problems.add(*sweep.get("parameters"), "the grid has more than " + std::to_string(kMaxTrials) +
                                                 " combinations; sample it instead (sampler = \"random\", trials = N)");
    else if (trials && *trials != size)
      problems.add(*sweep.get("trials"), "trials = " + std::to_string(*trials) + ", but the grid has " +
                                             std::to_string(size) + " combinations; leave trials out, or sample "
                                             "(sampler = \"random\")");
    spec.trials = size;
  } else if (trials) {
    spec.trials = *trials;
  } else if (!sweep.get("trials")) {
    problems.add(sweep, "[sweep] trials is required for sampler = \"" +
                            std::string(spec.sampler == Sampler::sobol ? "sobol" : "random") +
                            "\": how many trials to draw");
  }
}

void check_resources(const toml::table& sweep, SweepSpec& spec, int usable_cores, int usable_gpus,
                     Problems& problems) {
  const std::int64_t cores = std::max(1, usable_cores);
  if (auto threads = integer_at(sweep, "threads", 1, 4096, problems)) spec.threads = static_cast<int>(*threads);
  if (auto nproc = integer_at(sweep, "nproc", 1, 4096, problems)) spec.nproc = static_cast<int>(*nproc);
  if (auto gpus = integer_at(sweep, "gpus", 0, 4096, problems)) spec.gpus = static_cast<int>(*gpus);
  const std::int64_t per_trial = static_cast<std::int64_t>(spec.threads) * spec.nproc;
  if (spec.executor == ExecutorKind::slurm) {  // the cluster's cores, not this machine's
    spec.concurrency = static_cast<int>(std::max<std::int64_t>(1, spec.trials));
    if (auto concurrency = integer_at(sweep, "concurrency", 1, 4096, problems))
      spec.concurrency = static_cast<int>(*concurrency);
    return;
  }
  spec.concurrency = static_cast<int>(std::max<std::int64_t>(1, cores / std::max<std::int64_t>(1, per_trial)));
  if (spec.gpus > 0 && usable_gpus > 0) spec.concurrency = std::min(spec.concurrency, usable_gpus / spec.gpus);
  if (auto concurrency = integer_at(sweep, "concurrency", 1, 4096, problems)) {
    spec.concurrency = static_cast<int>(*concurrency);
    if (*concurrency * per_trial > cores)
      problems.add(*sweep.get("concurrency"),
                   "concurrency " + std::to_string(*concurrency) + " x threads " + std::to_string(spec.threads) +
                       (spec.nproc > 1 ? " x nproc " + std::to_string(spec.nproc) : "") + " is " +
                       std::to_string(*concurrency * per_trial) + " cores, but this machine has " +
                       std::to_string(cores) + " usable; lower concurrency or threads");
  } else if (per_trial > cores) {
    problems.add(sweep, "one trial takes threads " + std::to_string(spec.threads) + " x nproc " +
                            std::to_string(spec.nproc) + " = " + std::to_string(per_trial) +
                            " cores, but this machine has " + std::to_string(cores) + " usable");
  }
  if (spec.gpus > 0 && static_cast<std::int64_t>(spec.concurrency) * spec.gpus > usable_gpus)
    problems.add(sweep.get("gpus") ? *sweep.get("gpus") : static_cast<const toml::node&>(sweep),
                 "concurrency " + std::to_string(spec.concurrency) + " x gpus " + std::to_string(spec.gpus) +
                     " needs " + std::to_string(spec.concurrency * spec.gpus) + " GPUs, but this machine has " +
                     std::to_string(usable_gpus));
}

}  // namespace

SweepSpec parse_sweep_spec(std::string_view text, const std::string& path, int usable_cores, int usable_gpus) {
  if (text.size() > kMaxSpecBytes)
    throw RecipeError(path + ": a sweep spec is at most " + std::to_string(kMaxSpecBytes) + " bytes; this one is " +
                      std::to_string(text.size()));
  check_toml_text(text, path);
  toml::table root;
  try {
    root = parse_toml(text, path);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    throw RecipeError(path + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column) +
                      ": TOML syntax error: " + std::string(e.description()));
  }
  Problems problems(path);
  SweepSpec spec;
  spec.path = path;
  spec.text = std::string(text);
  spec.name = std::filesystem::path(path).stem().string();
  const toml::table* sweep = root[kSweepTable].as_table();
  // A [sweep] without a recipe key is a recipe's own: the file is the base
  // recipe, whose other tables `orchestrate sweep` checks as a run would.
  const bool in_a_recipe = sweep && !sweep->get("recipe") && root.size() > 1;
  if (!in_a_recipe)
    check_keys(root, {std::string(kSweepTable)}, "a sweep spec that names its recipe (everything goes in [sweep])",
               problems);
  if (!sweep) {
    problems.add("no [sweep] table: a sweep spec names its base recipe, metric and parameters there "
                 "(share/doc/sweeps.md)");
    problems.raise();
  }
  check_keys(*sweep, kSweepKeys, "[sweep]", problems);
  if (auto recipe = string_at(*sweep, "recipe", problems)) spec.recipe = *recipe;
  if (in_a_recipe) spec.recipe = std::filesystem::path(path).filename().string();
  if (spec.recipe.empty())
    problems.add(*sweep, "[sweep] recipe is required: the base recipe's file or name (or put [sweep] in the recipe "
                         "itself)");
  if (auto name = string_at(*sweep, "name", problems); name && !name->empty()) spec.name = *name;
  if (auto metric = string_at(*sweep, "metric", problems)) {
    spec.metric = *metric;
    spec.metric_where = problems.where(*sweep->get("metric"));
  }
  if (spec.metric.empty()) problems.add(*sweep, "[sweep] metric is required, e.g. metric = \"eval/top1\"");
  if (auto mode = choice_at<Mode>(*sweep, "mode", {{"max", Mode::max}, {"min", Mode::min}}, problems))
    spec.mode = *mode;
  if (auto seed = integer_at(*sweep, "seed", 0, std::numeric_limits<std::int64_t>::max(), problems))
    spec.seed = static_cast<std::uint64_t>(*seed);
  const toml::node* parameters = sweep->get("parameters");
  if (!parameters || !parameters->as_table() || parameters->as_table()->empty()) {
    problems.add(parameters ? *parameters : static_cast<const toml::node&>(*sweep),
                 "[sweep.parameters] must name at least one recipe key to vary, e.g. \"optimizer.lr\" = [0.01, 0.1]");
  } else {
    read_parameters(*parameters->as_table(), "", spec.parameters, problems);
    if (spec.parameters.size() > kMaxParameters)
      problems.add(*parameters, std::to_string(spec.parameters.size()) + " parameters; a sweep varies at most " +
                                    std::to_string(kMaxParameters));
  }
  if (const toml::node* stopping = sweep->get("early_stopping")) {
    if (const toml::table* table = stopping->as_table()) read_early_stopping(*table, spec.early_stopping, problems);
    else problems.add(*stopping, "early_stopping must be a table: [sweep.early_stopping]");
  }
  if (auto executor = choice_at<ExecutorKind>(
          *sweep, "executor", {{"local", ExecutorKind::local}, {"slurm", ExecutorKind::slurm}}, problems))
    spec.executor = *executor;
  if (const toml::node* slurm = sweep->get("slurm")) {
    if (const toml::table* table = slurm->as_table()) read_slurm(*table, spec.slurm, problems);
    else problems.add(*slurm, "slurm must be a table: [sweep.slurm]");
    if (spec.executor != ExecutorKind::slurm)
      problems.add(*slurm, "[sweep.slurm] is given, but executor is not \"slurm\"; add executor = \"slurm\"");
  }
  if (problems.empty()) resolve_sampling(*sweep, spec, problems);
  check_resources(*sweep, spec, usable_cores, usable_gpus, problems);
  if (!problems.empty()) problems.raise();
  return spec;
}

SweepSpec read_sweep_spec(const std::string& path, int usable_cores, int usable_gpus) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (error || !std::filesystem::is_regular_file(path))
    throw RecipeError(path + ": sweep spec not found (give the path to a .toml sweep spec, e.g. "
                      "recipes/sweeps/fashion_mnist_lr.toml)");
  if (size > kMaxSpecBytes)
    throw RecipeError(path + ": a sweep spec is at most " + std::to_string(kMaxSpecBytes) + " bytes; this one is " +
                      std::to_string(size));
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw RecipeError(path + ": sweep spec cannot be read (check its permissions)");
  return parse_sweep_spec(text.str(), path, usable_cores, usable_gpus);
}

}  // namespace orchestrate::sweep
