#include "analysis/run_comparison.h"

#include <gtest/gtest.h>

#include "analysis/recipe_flattening.h"

namespace orchestrate {
namespace {

ComparedRun run_with(std::int64_t id, const std::string& name, const std::string& lr, double top1) {
  ComparedRun run;
  RunDetails& d = run.details;
  d.summary.id = id;
  d.summary.name = name;
  d.summary.final_metrics = {{"eval/top1", top1}, {"train/loss", 0.5}, {"time/eval_s", 1.5}};
  d.metric_extremes = {{"eval/top1", {top1 - 0.1, top1 + 0.01}}, {"train/loss", {0.4, 2.3}}, {"time/eval_s", {1.5, 1.5}}};
  d.record.resolved_recipe = "schema_version = 1\n[run]\nname = \"" + name + "\"\nseed = 42\n[optimizer]\nplugin = \"adam\"\nlr = " +
                             lr + "\n[schedule]\nboundaries = [5]\n";
  d.record.torch_version = "2.11.0";
  d.record.host = "node7";
  d.record.device = "cpu";
  d.record.plugins = {{"adam", "1.0.0", "/p/libadam.so", "aaaaaaaaaaaaaaaa"}, {"convnet", "1.0.0", "/p/libconvnet.so", "cccc"}};
  run.throughput.median_images_per_s = 1000.0 + static_cast<double>(id);
  run.throughput.steps = 100;
  run.throughput.wall_s = 12.0;
  return run;
}

// The row of `what` and `key`, as printed; empty when there is none.
std::vector<std::string> row_of(const Table& table, const std::string& what, const std::string& key) {
  for (const auto& row : table.rows) {
    if (row[0].text != what || row[1].text != key) continue;
    std::vector<std::string> texts;
    for (std::size_t c = 2; c < row.size(); ++c) texts.push_back(row[c].text);
    return texts;
  }
  return {};
}

TEST(RunComparisonTest, ShowsOnlyTheRecipeKeysThatDifferBesideTheMetrics) {
  std::vector<ComparedRun> runs = {run_with(1, "slow", "0.001", 0.8), run_with(2, "fast", "0.01", 0.6)};
  runs[1].details.record.plugins[0].sha256 = "bbbbbbbbbbbbbbbb";
  runs[1].details.record.host = "node8";
  const Table table = comparison_table(runs);

  EXPECT_EQ(table.headers, (std::vector<std::string>{"what", "key", "slow", "fast"}));
  EXPECT_EQ(row_of(table, "recipe", "optimizer.lr"), (std::vector<std::string>{"0.001", "0.01"}));
  EXPECT_EQ(row_of(table, "recipe", "run.name"), (std::vector<std::string>{"slow", "fast"}));
  EXPECT_TRUE(row_of(table, "recipe", "run.seed").empty()) << "equal keys are left out";
  EXPECT_TRUE(row_of(table, "recipe", "schedule.boundaries").empty());
  EXPECT_EQ(row_of(table, "final", "eval/top1"), (std::vector<std::string>{"0.8000", "0.6000"}));
  EXPECT_EQ(row_of(table, "best", "eval/top1"), (std::vector<std::string>{"0.8100", "0.6100"})) << "highest";
  EXPECT_TRUE(row_of(table, "best", "train/loss").empty()) << "equal metrics are left out";
  EXPECT_TRUE(row_of(table, "final", "train/loss").empty());
  const Table every = comparison_table(runs, /*every_metric=*/true);
  EXPECT_EQ(row_of(every, "best", "train/loss"), (std::vector<std::string>{"0.4000", "0.4000"})) << "lowest";
  EXPECT_EQ(row_of(every, "final", "train/loss"), (std::vector<std::string>{"0.5000", "0.5000"}));
  EXPECT_TRUE(row_of(table, "best", "time/eval_s").empty());
  // A measured figure differs between machines, not between better and worse runs.
  runs[0].details.summary.final_metrics["perf/peak_flops_per_s"] = 98904131483.8542;
  runs[1].details.summary.final_metrics["perf/peak_flops_per_s"] = 145285790183.8016;
  runs[0].details.metric_extremes["perf/peak_flops_per_s"] = {98904131483.8542, 98904131483.8542};
  runs[1].details.metric_extremes["perf/peak_flops_per_s"] = {145285790183.8016, 145285790183.8016};
  const Table peaks = comparison_table(runs);
  EXPECT_EQ(row_of(peaks, "final", "perf/peak_flops_per_s"), (std::vector<std::string>{"9.890e+10", "1.453e+11"}));
  EXPECT_TRUE(row_of(peaks, "best", "perf/peak_flops_per_s").empty());
  EXPECT_EQ(row_of(table, "throughput", "median images/s"), (std::vector<std::string>{"1001.0", "1002.0"}));
  EXPECT_EQ(row_of(table, "throughput", "wall_s"), (std::vector<std::string>{"12.0", "12.0"}));
  EXPECT_EQ(row_of(table, "plugin", "adam"), (std::vector<std::string>{"1.0.0 aaaaaaaaaaaa", "1.0.0 bbbbbbbbbbbb"}));
  EXPECT_TRUE(row_of(table, "plugin", "convnet").empty());
  EXPECT_EQ(row_of(table, "environment", "host"), (std::vector<std::string>{"node7", "node8"}));
  EXPECT_TRUE(row_of(table, "environment", "libtorch").empty());
  // Recipe differences come first, beside the metrics they led to.
  EXPECT_EQ(table.rows.front()[0].text, "recipe");
}

TEST(RunComparisonTest, JsonKeepsRecipeTypesAndRepeatedNamesGetTheirIds) {
  const Table table = comparison_table({run_with(7, "42", "0.001", 0.8), run_with(9, "42", "0.01", 0.6)});
  EXPECT_EQ(table.headers, (std::vector<std::string>{"what", "key", "42#7", "42#9"}));
  const std::string json = render(table, TableFormat::json);
  // JSON: the runs' values as an array in the order given (names are no keys: they repeat).
  EXPECT_NE(json.find("\"key\": \"optimizer.lr\",\n    \"values\": [\n      0.001,\n      0.01\n    ]"),
            std::string::npos)
      << json;
}

TEST(RecipeFlatteningTest, DottedKeysWithTypes) {
  const auto cells = flatten_recipe(
      "[run]\nname = \"42\"\nepochs = 3\n[optimizer]\nlr = 0.1\neps = 1e-20\nmomentum = 0.0005\n[[optimizer.wrappers]]\nplugin = \"lars\"\n"
      "[schedule]\nboundaries = [5, 8]\nwarmup = true\n");
  EXPECT_EQ(cells.at("run.name").text, "42");
  EXPECT_EQ(cells.at("run.name").type, CellType::text);
  EXPECT_EQ(cells.at("run.epochs").text, "3");
  EXPECT_EQ(cells.at("run.epochs").type, CellType::number);
  EXPECT_EQ(cells.at("optimizer.lr").text, "0.1");
  EXPECT_EQ(cells.at("optimizer.momentum").text, "0.0005");
  EXPECT_EQ(cells.at("optimizer.eps").text, "1e-20");
  EXPECT_EQ(cells.at("optimizer.wrappers.0.plugin").text, "lars");
  EXPECT_EQ(cells.at("schedule.boundaries").text, "[ 5, 8 ]");
  EXPECT_EQ(cells.at("schedule.warmup").text, "true");
}

}  // namespace
}  // namespace orchestrate
