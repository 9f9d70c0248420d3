#include "analysis/run_comparison.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <set>

#include "analysis/recipe_flattening.h"

namespace orchestrate {
namespace {

// A run's column header: its name, with its id where two compared runs share it.
std::vector<std::string> run_headers(const std::vector<ComparedRun>& runs) {
  std::map<std::string, int> uses;
  for (const ComparedRun& run : runs) ++uses[run.details.summary.name];
  std::vector<std::string> headers;
  for (const ComparedRun& run : runs) {
    const RunSummary& summary = run.details.summary;
    headers.push_back(uses[summary.name] > 1 ? summary.name + "#" + std::to_string(summary.id) : summary.name);
  }
  return headers;
}

// The recipe as dotted keys; a stored recipe that does not parse falls back
// to the stored flattened params, whose types are then guessed. A core key
// the run did not record (it predates the key) reads as its default.
std::map<std::string, Cell> recipe_cells(const RunDetails& details, const std::map<std::string, Cell>& defaults) {
  std::map<std::string, Cell> cells;
  try {
    cells = flatten_recipe(details.record.resolved_recipe);
  } catch (const std::exception&) {
    for (const auto& [key, value] : details.record.params) cells[key] = Cell(value);
  }
  for (const auto& [key, cell] : defaults) cells.emplace(key, cell);
  return cells;
}

class ComparisonBuilder {
 public:
  explicit ComparisonBuilder(const std::vector<ComparedRun>& runs) : runs_(runs) {
    table_.headers = {"what", "key"};
    for (const std::string& header : run_headers(runs)) table_.headers.push_back(header);
    // JSON: {"what", "key", "values": [one per run, in the order given]}, as
    // run names are no keys (two runs may share one).
    table_.json_groups.push_back({"values", 2, runs.size(), /*as_array=*/true});
  }

  // A row of one cell per run.
  void row(const std::string& what, const std::string& key, const std::function<Cell(const ComparedRun&)>& cell_of) {
    std::vector<Cell> cells = {text_cell(what), text_cell(key)};
    for (const ComparedRun& run : runs_) cells.push_back(cell_of(run));
    table_.rows.push_back(std::move(cells));
  }

  // A row of cells already made, one per run in order.
  void row(const std::string& what, const std::string& key, std::vector<Cell> run_cells) {
    std::vector<Cell> cells = {text_cell(what), text_cell(key)};
    cells.insert(cells.end(), std::make_move_iterator(run_cells.begin()), std::make_move_iterator(run_cells.end()));
    table_.rows.push_back(std::move(cells));
  }

  // The row only when its cells' texts are not all the same.
  void row_if_different(const std::string& what, const std::string& key,
                        const std::function<Cell(const ComparedRun&)>& cell_of) {
    std::set<std::string> texts;
    for (const ComparedRun& run : runs_) texts.insert(cell_of(run).text);
    if (texts.size() > 1) row(what, key, cell_of);
  }

  Table take() { return std::move(table_); }

 private:
  const std::vector<ComparedRun>& runs_;
  Table table_;
};

void add_recipe_rows(ComparisonBuilder& builder, const std::vector<ComparedRun>& runs) {
  std::vector<RunDetails> details;
  for (const ComparedRun& run : runs) details.push_back(run.details);
  for (auto& [key, cells] : recipe_differences(details)) builder.row("recipe", key, std::move(cells));
}

void add_metric_rows(ComparisonBuilder& builder, const std::vector<ComparedRun>& runs, bool every_metric) {
  std::set<std::string> metrics;
  for (const ComparedRun& run : runs)
    for (const auto& [name, value] : run.details.summary.final_metrics) metrics.insert(name);
  // Two runs of one recipe had listed some 20 equal metric rows.
  const auto add_row = [&](const std::string& what, const std::string& key,
                           const std::function<Cell(const ComparedRun&)>& cell_of) {
    if (every_metric) builder.row(what, key, cell_of);
    else builder.row_if_different(what, key, cell_of);
  };
  for (const std::string& metric : metrics) {
    add_row("final", metric, [&](const ComparedRun& run) {
      const auto& finals = run.details.summary.final_metrics;
      const auto found = finals.find(metric);
      return found == finals.end() ? Cell() : metric_cell(found->second);
    });
  }
  for (const std::string& metric : metrics) {
    // A time, or a measured figure (a peak, FLOPs an image), is taken once: nothing to be best at.
    if (metric.starts_with("time/") || metric.starts_with("perf/")) continue;
    add_row("best", metric, [&](const ComparedRun& run) {
      const auto& extremes = run.details.metric_extremes;
      const auto found = extremes.find(metric);
      if (found == extremes.end()) return Cell();
      return metric_cell(lower_is_better(metric) ? found->second.min : found->second.max);
    });
  }
}

void add_throughput_rows(ComparisonBuilder& builder) {
  builder.row("throughput", "median images/s",
              [](const ComparedRun& run) { return number_cell(run.throughput.median_images_per_s, 1); });
  builder.row("throughput", "steps", [](const ComparedRun& run) { return integer_cell(run.throughput.steps); });
  builder.row("throughput", "wall_s", [](const ComparedRun& run) { return number_cell(run.throughput.wall_s, 1); });
}

// "1.0.0 3f2a9c0d1e2b": the version and enough of the SHA-256 to tell builds apart.
Cell plugin_cell(const RunRecord& record, const std::string& name) {
  for (const PluginRecord& plugin : record.plugins) {
    if (plugin.name != name) continue;
    return text_cell(plugin.sha256.empty() ? plugin.version : plugin.version + " " + plugin.sha256.substr(0, 12));
  }
  return Cell();
}

void add_plugin_rows(ComparisonBuilder& builder, const std::vector<ComparedRun>& runs) {
  std::set<std::string> names;
  for (const ComparedRun& run : runs)
    for (const PluginRecord& plugin : run.details.record.plugins) names.insert(plugin.name);
  for (const std::string& name : names)
    builder.row_if_different("plugin", name, [&](const ComparedRun& run) { return plugin_cell(run.details.record, name); });
}

void add_environment_rows(ComparisonBuilder& builder) {
  const std::vector<std::pair<std::string, std::function<Cell(const RunRecord&)>>> facts = {
      {"orchestrate", [](const RunRecord& r) { return text_cell(r.orchestrate_version); }},
      {"libtorch", [](const RunRecord& r) { return text_cell(r.torch_version); }},
      {"host", [](const RunRecord& r) { return text_cell(r.host); }},
      {"device", [](const RunRecord& r) { return text_cell(r.device); }},
      {"world_size", [](const RunRecord& r) { return integer_cell(r.world_size); }},
      {"git_revision", [](const RunRecord& r) { return text_cell(r.git_revision); }},
  };
  for (const auto& key_and_fact : facts) {
    const auto& fact = key_and_fact.second;  // (clang 14 cannot capture a structured binding)
    builder.row_if_different("environment", key_and_fact.first,
                             [&](const ComparedRun& run) { return fact(run.details.record); });
  }
}

}  // namespace

std::vector<std::pair<std::string, std::vector<Cell>>> recipe_differences(const std::vector<RunDetails>& runs,
                                                                          const CoreDefaults& defaults) {
  const std::map<std::string, Cell> default_cells = flatten_recipe(defaults.toml());
  std::vector<std::map<std::string, Cell>> recipes;
  std::set<std::string> keys;
  for (const RunDetails& run : runs) {
    recipes.push_back(recipe_cells(run, default_cells));
    for (const auto& [key, cell] : recipes.back()) keys.insert(key);
  }
  std::vector<std::pair<std::string, std::vector<Cell>>> differences;
  for (const std::string& key : keys) {
    std::vector<Cell> cells;
    std::set<std::string> texts;
    for (const auto& recipe : recipes) {
      const auto found = recipe.find(key);
      cells.push_back(found == recipe.end() ? Cell() : found->second);
      texts.insert(cells.back().text);
    }
    if (texts.size() > 1) differences.emplace_back(key, std::move(cells));
  }
  return differences;
}

bool lower_is_better(const std::string& metric) {
  return metric.find("loss") != std::string::npos || metric.find("error") != std::string::npos;
}

Table comparison_table(const std::vector<ComparedRun>& runs, bool every_metric) {
  ComparisonBuilder builder(runs);
  add_recipe_rows(builder, runs);
  add_metric_rows(builder, runs, every_metric);
  add_throughput_rows(builder);
  add_plugin_rows(builder, runs);
  add_environment_rows(builder);
  return builder.take();
}

}  // namespace orchestrate
