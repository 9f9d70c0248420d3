// The query commands end to end (runs, show, compare) over real runs: two
// short Fashion-MNIST trainings that differ in their learning rate, and a
// store the user cannot write or that an older orchestrate wrote.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "build_paths.h"
#include "command_runner.h"
#include "orchestrate/testing/scratch_dir.h"
#include "store/first_release_store.h"
#include "store/run_store.h"
#include "store/run_store_schema.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

const std::string kFashionMnist = std::string(orchestrate::build_paths::kSourceDir) + "/recipes/fashion_mnist.toml";
// One epoch over the first 1,000 images (and 1,000 test images): a few seconds on a CPU.
const std::string kShortRun = " --set run.epochs=1 --set run.batch_size=50 --set data.limit=1000 --set run.device=cpu --quiet";

// The line of `text` that holds every one of `parts`, in order; "" if none.
std::string line_with(const std::string& text, const std::vector<std::string>& parts) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::size_t at = 0;
    bool all = true;
    for (const std::string& part : parts) {
      at = line.find(part, at);
      if (at == std::string::npos) {
        all = false;
        break;
      }
      at += part.size();
    }
    if (all) return line;
  }
  return "";
}

// Two runs of the Fashion-MNIST recipe in `db`: "slow_lr" (lr 0.0005) and
// "42" (lr 0.005, named so to check that a name stays a name), both tagged
// sweep=lr, "42" also team=vision.
void train_the_pair(const std::string& db) {
  const auto slow = run_orchestrate("run " + kFashionMnist + kShortRun + " --db " + db +
                                    " --set run.name=slow_lr --set optimizer.lr=0.0005 --tag sweep=lr");
  ASSERT_EQ(slow.exit_code, 0) << slow.output;
  const auto fast = run_orchestrate("run " + kFashionMnist + kShortRun + " --db " + db +
                                    " --set run.name=42 --set optimizer.lr=0.005 --tag sweep=lr --tag team=vision");
  ASSERT_EQ(fast.exit_code, 0) << fast.output;
}

TEST(QueryCli, CompareShowsTheLearningRateBesideTheMetricsItChanged) {
  ScratchDir dir;
  const std::string db = dir.file("runs.db");
  ASSERT_NO_FATAL_FAILURE(train_the_pair(db));

  const auto table = run_orchestrate("compare slow_lr 42 --db " + db);
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(line_with(table.output, {"what", "key", "slow_lr", "42"}), "") << table.output;
  EXPECT_NE(line_with(table.output, {"recipe", "optimizer.lr", "0.0005", "0.005"}), "") << table.output;
  EXPECT_NE(line_with(table.output, {"recipe", "run.name", "slow_lr", "42"}), "") << table.output;
  EXPECT_EQ(line_with(table.output, {"recipe", "run.seed"}), "") << "keys that are equal are left out\n" << table.output;
  EXPECT_EQ(line_with(table.output, {"recipe", "data.limit"}), "") << table.output;
  EXPECT_NE(line_with(table.output, {"final", "eval/top1"}), "") << table.output;
  EXPECT_NE(line_with(table.output, {"best", "train/loss"}), "") << table.output;
  EXPECT_NE(line_with(table.output, {"throughput", "median images/s"}), "") << table.output;
  EXPECT_NE(line_with(table.output, {"throughput", "wall_s"}), "") << table.output;
  EXPECT_EQ(line_with(table.output, {"plugin"}), "") << "the same plugin builds trained both\n" << table.output;
  EXPECT_EQ(line_with(table.output, {"environment"}), "") << "the same machine trained both\n" << table.output;

  // The same as JSON: the learning rates are numbers, and the metric they
  // changed differs between the two runs.
  const auto json = run_orchestrate("compare slow_lr 42 --db " + db + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto rows = nlohmann::json::parse(json.output);
  bool saw_lr = false, saw_top1 = false;
  for (const auto& row : rows) {
    if (row["what"] == "recipe" && row["key"] == "optimizer.lr") {
      saw_lr = true;
      EXPECT_DOUBLE_EQ(row["values"][0].get<double>(), 0.0005);  // in the order the runs were given
      EXPECT_DOUBLE_EQ(row["values"][1].get<double>(), 0.005);
    }
    if (row["what"] == "final" && row["key"] == "eval/top1") {
      saw_top1 = true;
      EXPECT_NE(row["values"][0].get<double>(), row["values"][1].get<double>()) << json.output;
    }
  }
  EXPECT_TRUE(saw_lr && saw_top1) << json.output;

  const auto markdown = run_orchestrate("compare slow_lr 42 --db " + db + " --format markdown");
  ASSERT_EQ(markdown.exit_code, 0) << markdown.output;
  EXPECT_NE(markdown.output.find("| recipe | optimizer.lr | 0.0005 | 0.005 |\n"), std::string::npos) << markdown.output;

  const auto one = run_orchestrate("compare slow_lr --db " + db);
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_EQ(one.output, "orchestrate: error: compare: give two runs or more (ids or names; see orchestrate runs)\n");

  // runs: filters, sorting, and JSON that keeps types.
  const auto all = run_orchestrate("runs --db " + db + " --format json");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  const auto listed = nlohmann::json::parse(all.output);
  ASSERT_EQ(listed.size(), 2u) << all.output;
  EXPECT_TRUE(listed[0]["name"].is_string()) << all.output;
  EXPECT_EQ(listed[0]["name"], "42") << "a run named 42 stays a string";
  EXPECT_TRUE(listed[0]["id"].is_number_integer()) << all.output;
  EXPECT_TRUE(listed[0]["metrics"]["eval/top1"].is_number_float()) << all.output;
  EXPECT_EQ(listed[0]["tags"], (nlohmann::json{{"sweep", "lr"}, {"team", "vision"}}));

  auto names = [&](const std::string& options) {
    const auto result = run_orchestrate("runs --db " + db + " --format json " + options);
    EXPECT_EQ(result.exit_code, 0) << options << "\n" << result.output;
    std::vector<std::string> found;
    for (const auto& row : nlohmann::json::parse(result.output)) found.push_back(row["name"]);
    return found;
  };
  const double slow_top1 = listed[1]["metrics"]["eval/top1"], fast_top1 = listed[0]["metrics"]["eval/top1"];
  const std::vector<std::string> best_first =
      slow_top1 > fast_top1 ? std::vector<std::string>{"slow_lr", "42"} : std::vector<std::string>{"42", "slow_lr"};
  EXPECT_EQ(names("--sort eval/top1"), best_first);
  EXPECT_EQ(names("--sort eval/top1 --limit 1"), std::vector<std::string>{best_first.front()});
  EXPECT_EQ(names("--tag team=vision"), std::vector<std::string>{"42"});
  EXPECT_EQ(names("--tag sweep=lr --tag team=vision"), std::vector<std::string>{"42"});
  EXPECT_EQ(names("--tag sweep=other"), std::vector<std::string>{});
  EXPECT_EQ(names("--name 'slow*'"), std::vector<std::string>{"slow_lr"});
  EXPECT_EQ(names("--status finished --recipe fashion_mnist.toml --since 1h").size(), 2u);
  EXPECT_EQ(names("--status failed"), std::vector<std::string>{});

  const auto typo = run_orchestrate("runs --db " + db + " --sort eval/top2");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.output.find("--sort eval/top2: not a column"), std::string::npos) << typo.output;

  // show: everything recorded about one run, its provenance included.
  const auto shown = run_orchestrate("show 42 --db " + db + " --format json");
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  const auto details = nlohmann::json::parse(shown.output);
  EXPECT_EQ(details["run"]["name"], "42");
  EXPECT_EQ(details["run"]["status"], "finished");
  EXPECT_EQ(details["run"]["device"], "cpu");
  EXPECT_EQ(details["run"]["libtorch"], "2.11.0");
  EXPECT_FALSE(details["run"]["host"].get<std::string>().empty());
  EXPECT_EQ(details["run"]["tags"]["team"], "vision");
  const std::string command_line = details["run"]["command_line"];
  EXPECT_NE(command_line.find("orchestrate run " + kFashionMnist), std::string::npos) << command_line;
  EXPECT_NE(command_line.find("--set optimizer.lr=0.005 --tag sweep=lr --tag team=vision"), std::string::npos)
      << command_line;
  bool saw_dataset = false;
  for (const auto& plugin : details["plugins"])
    if (plugin["name"] == "fashion_mnist") saw_dataset = plugin["sha256"].get<std::string>().size() == 64;
  EXPECT_TRUE(saw_dataset) << shown.output;
  EXPECT_GT(details["events"].size(), 0u) << shown.output;
  EXPECT_GT(details["metrics"].size(), 0u) << shown.output;
  EXPECT_NE(details["resolved_recipe"].get<std::string>().find("lr = 0.005"), std::string::npos) << shown.output;

  const auto text = run_orchestrate("show 42 --db " + db);
  ASSERT_EQ(text.exit_code, 0) << text.output;
  for (const char* section : {"run\n", "\nmetrics\n", "\nplugins\n", "\nevents\n", "\nresolved recipe\n"})
    EXPECT_NE(text.output.find(section), std::string::npos) << section << "\n" << text.output;
}

const std::string kMockRecipe = R"(schema_version = 1
[run]
name = "mock"
batch_size = 32
max_steps = 5
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 256
test_size = 64
[model]
plugin = "lenet"
[optimizer]
plugin = "adam"
)";

TEST(QueryCli, QueriesReadAStoreTheyCannotWriteAndNeverChangeIt) {
  ScratchDir dir;
  const std::string db = dir.file("store/runs.db");
  const auto recipe = dir.write("mock.toml", kMockRecipe);
  const auto trained = run_orchestrate("run " + recipe + " --db " + db + " --quiet --tag kind=smoke");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  ASSERT_FALSE(fs::exists(db + "-wal")) << "the writer has closed the store";

  // Neither the file nor its directory may be written (for root, who may
  // write anyway, the check that counts is that the bytes stay the same).
  const auto read_only = fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read;
  fs::permissions(db, read_only);
  fs::permissions(fs::path(db).parent_path(), read_only | fs::perms::owner_exec | fs::perms::group_exec |
                                                  fs::perms::others_exec);
  const std::string before = file_bytes(db);
  for (const std::string query : {"runs", "runs --tag kind=smoke", "show mock", "compare mock 1",
                                  "report throughput mock"}) {
    const auto result = run_orchestrate(query + " --db " + db);
    EXPECT_EQ(result.exit_code, 0) << query << "\n" << result.output;
    EXPECT_NE(result.output.find("mock"), std::string::npos) << query << "\n" << result.output;
  }
  EXPECT_EQ(file_bytes(db), before);
  fs::permissions(fs::path(db).parent_path(), fs::perms::owner_all);
  fs::permissions(db, read_only | fs::perms::owner_write);

  // A store an older orchestrate wrote (schema version 4): a query says how
  // to upgrade it, in one line, and leaves it as it was; a run upgrades it.
  ASSERT_EQ(run_shell("sqlite3 " + db + " 'PRAGMA user_version = 4'").exit_code, 0);
  const std::string old_bytes = file_bytes(db);
  const auto refused = run_orchestrate("runs --db " + db);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.output.rfind("orchestrate: error: " + db + " has run-store schema version 4, older than this ", 0), 0)
      << refused.output;
  EXPECT_TRUE(refused.output.ends_with("; queries never change the file: upgrade it once with `orchestrate store "
                                       "upgrade --db " + db + "` (a run with it does too)\n"))
      << refused.output;
  EXPECT_EQ(file_bytes(db), old_bytes);
  EXPECT_EQ(run_shell("sqlite3 " + db + " 'PRAGMA user_version'").output, "4\n");
}

// The upgrade the refusal above names: a store as the first release wrote
// it, brought to this schema with its runs, after which the queries read it.
TEST(QueryCli, StoreUpgradeBringsAStoreOfTheFirstReleaseToThisSchema) {
  ScratchDir dir;
  const std::string db = dir.file("v1.db");
  write_first_release_store(db, "INSERT INTO runs (id, name, status, host, started_at, ended_at) VALUES (1, "
                                "'first_release', 'finished', 'node7', '2024-05-01T10:00:00.000Z', "
                                "'2024-05-01T11:00:00.000Z')");
  EXPECT_EQ(run_orchestrate("runs --db " + db).exit_code, 1);
  const auto upgraded = run_orchestrate("store upgrade --db " + db);
  EXPECT_EQ(upgraded.exit_code, 0) << upgraded.output;
  EXPECT_EQ(upgraded.output, db + ": run-store schema version 1 -> " + std::to_string(latest_schema_version()) + "\n");
  const auto listed = run_orchestrate("runs --db " + db);
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("first_release"), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("3600.0"), std::string::npos) << "its hour, as it was: " << listed.output;
  const auto again = run_orchestrate("store upgrade --db " + db);
  EXPECT_EQ(again.output, db + ": run-store schema version " + std::to_string(latest_schema_version()) +
                              ", this orchestrate's already\n");
  EXPECT_EQ(run_orchestrate("store upgrade --db " + dir.file("none.db")).exit_code, 2);
  const auto text = run_orchestrate("store upgrade --db " + dir.write("notes.db", "not a database\n"));
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.output.find("notes.db: opening failed: file is not a database; it is not an orchestrate run store"),
            std::string::npos)
      << text.output;
}

// `rerun` runs the resolved recipe a run recorded as a new run linked to it;
// --set and the other run options still apply, and an unknown run runs nothing.
TEST(QueryCli, RerunRepeatsARecordedRecipeAsANewLinkedRun) {
  ScratchDir dir;
  const std::string db = dir.file("runs.db");
  const auto recipe = dir.write("mock.toml", kMockRecipe);
  ASSERT_EQ(run_orchestrate("run " + recipe + " --db " + db + " --quiet --set optimizer.lr=0.002").exit_code, 0);
  const auto again = run_orchestrate("rerun mock --db " + db + " --quiet --tag why=repeat");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  const auto changed = run_orchestrate("rerun 1 --db " + db + " --quiet --set run.max_steps=3");
  ASSERT_EQ(changed.exit_code, 0) << changed.output;

  RunStore store(db);
  const auto first = store.find_run("1"), second = store.find_run("2"), third = store.find_run("3");
  ASSERT_TRUE(first && second && third);
  EXPECT_EQ(store.resolved_recipe(2), store.resolved_recipe(1)) << "the same resolved recipe, lr 0.002 included";
  EXPECT_EQ(second->source_run_id, 1);
  EXPECT_EQ(second->tags.at("why"), "repeat");
  EXPECT_EQ(second->recipe_path, dir.file("reruns/mock-run1.toml"));
  EXPECT_EQ(store.step_timings(2).size(), 5u);
  EXPECT_EQ(store.step_timings(3).size(), 3u);
  const auto runs = run_orchestrate("runs --db " + db);  // people: "rerun of 1"; programs: train, source_run 1
  EXPECT_NE(runs.output.find("rerun of 1"), std::string::npos) << runs.output;
  const auto csv = run_orchestrate("runs --db " + db + " --format csv");
  EXPECT_NE(csv.output.find(",train,1,finished,"), std::string::npos) << csv.output;

  const auto unknown = run_orchestrate("rerun 9 --db " + db);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_EQ(RunStore(db).find_runs({}).size(), 3u) << "nothing recorded for an unknown run";
}

TEST(QueryCli, BadTagsAreRefusedBeforeAnythingRuns) {
  ScratchDir dir;
  const auto recipe = dir.write("mock.toml", kMockRecipe);
  const auto no_value = run_orchestrate("run " + recipe + " --db " + dir.file("runs.db") + " --tag lonely");
  EXPECT_EQ(no_value.exit_code, 2);
  EXPECT_EQ(no_value.output, "orchestrate: error: --tag lonely: expected key=value, e.g. --tag experiment=lr_sweep\n");
  const auto twice = run_orchestrate("run " + recipe + " --db " + dir.file("runs.db") + " --tag a=1 --tag a=2");
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_EQ(twice.output, "orchestrate: error: --tag a: given twice; give each key once\n");
  EXPECT_FALSE(fs::exists(dir.file("runs.db")));
}

// `report regressions` as CI would use it: a store with three equal runs of a
// recipe and a fourth 30 % slower (made with the store's own API, so the
// figures are exact) exits 4 and names the slow run and the phase that grew;
// --name selecting only the equal runs exits 0.
TEST(QueryCli, ReportRegressionsFlagsAnInjectedSlowRunWithExitCode4) {
  ScratchDir dir;
  const std::string db = dir.file("runs.db");
  {
    RunStore store(db);
    const auto add = [&](const std::string& name, double step_s, double data_wait_s) {
      RunRecord record;
      record.name = name;
      record.host = "box";
      record.device = "cpu";
      record.params = {{"optimizer.lr", "0.1"}, {"run.name", "\"" + name + "\""}};
      const auto id = store.begin_run(record);
      for (int s = 1; s <= 30; ++s) {
        StepTiming t;
        t.step = s;
        t.images = 64;
        t.total_s = step_s * (1 + 0.01 * (s % 3));
        t.data_wait_s = data_wait_s;
        t.compute_s = t.total_s - data_wait_s;
        store.record_step(id, t);
      }
      store.finish_run(id, RunStatus::finished);
    };
    add("nightly_1", 0.1, 0.01);
    add("nightly_2", 0.1, 0.01);
    add("nightly_3", 0.1, 0.01);
    add("slow_4", 0.13, 0.04);
  }
  const auto report = run_orchestrate("report regressions --format json --db " + db);
  EXPECT_EQ(report.exit_code, 4) << report.output;
  const auto json_start = report.output.find('[');
  ASSERT_NE(json_start, std::string::npos) << report.output;
  const auto rows = nlohmann::json::parse(report.output.substr(json_start, report.output.rfind(']') - json_start + 1));
  ASSERT_EQ(rows.size(), 3u) << report.output;
  EXPECT_EQ(rows[2]["name"], "slow_4");
  EXPECT_EQ(rows[2]["flagged"], true);
  EXPECT_EQ(rows[2]["grown_phase"], "data_wait");
  EXPECT_EQ(rows[0]["flagged"], false);
  EXPECT_NE(report.output.find("orchestrate: report regressions: 1 run slower than the earlier runs of the same "
                               "recipe by more than 5.0 %"),
            std::string::npos)
      << report.output;
  EXPECT_EQ(run_orchestrate("report regressions --name 'nightly_*' --db " + db).exit_code, 0);
  EXPECT_EQ(run_orchestrate("report regressions --threshold 40 --db " + db).exit_code, 0) << "a 23 % drop";
  EXPECT_EQ(run_orchestrate("report regressions --threshold -1 --db " + db).exit_code, 2);
  // The first run of a recipe has nothing to be compared with: a sentence, not bare column headers.
  const auto alone = run_orchestrate("report regressions --name nightly_1 --db " + db);
  EXPECT_EQ(alone.exit_code, 0) << alone.output;
  EXPECT_EQ(alone.output, "nothing to compare: none of the 1 run selected has an earlier run of the same recipe on "
                          "the same machine, device and world size (train a recipe again, then report regressions)\n");
}

// A store from another machine (or a Slurm trial's own store) brought in:
// its runs query like the ones trained here, and importing it again changes
// nothing; a file that is no store is refused in one line, exit 1.
TEST(QueryCli, StoreImportBringsAnotherStoresRunsOnceAndAgainChangesNothing) {
  ScratchDir dir;
  const std::string other = dir.file("node7.db");
  const std::string db = dir.file("runs.db");
  train_the_pair(other);
  const auto first = run_orchestrate("store import " + other + " --db " + db);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(first.output, "imported 2 runs of " + other + " into " + db + ":\n  run 1 there is run 1 here\n"
                          "  run 2 there is run 2 here\n");
  const auto again = run_orchestrate("store import " + other + " --db " + db);
  EXPECT_EQ(again.output, first.output) << "the same runs, the same ids";
  const auto runs = run_orchestrate("runs --tag sweep=lr --format json --db " + db);
  ASSERT_EQ(runs.exit_code, 0) << runs.output;
  EXPECT_EQ(nlohmann::json::parse(runs.output).size(), 2u);
  const auto shown = run_orchestrate("show slow_lr --db " + db);
  EXPECT_NE(shown.output.find("optimizer.lr"), std::string::npos) << shown.output;
  const std::string text = dir.write("notes.txt", "not a run store, only words, but more than a header's worth");
  const auto refused = run_orchestrate("store import " + text + " --db " + db);
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_EQ(std::count(refused.output.begin(), refused.output.end(), '\n'), 1) << refused.output;
  EXPECT_NE(refused.output.find(text), std::string::npos) << refused.output;
}

}  // namespace
}  // namespace orchestrate::testing
