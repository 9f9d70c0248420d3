// Several `orchestrate run` processes writing one store at once, as a sweep
// on one machine does, with queries reading it meanwhile: no row is lost or
// doubled, no writer reports a locked database, every query answers. The
// four start together on a file that does not exist yet, so they also race
// to create it, switch it to WAL and migrate it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <future>
#include <map>
#include <tuple>
#include <thread>
#include <vector>

#include "command_runner.h"
#include "small_lenet_recipe.h"

namespace orchestrate::testing {
namespace {

constexpr int kWriters = 4;
constexpr int kSteps = 400;
// A window of one step: every step commits its train/* metrics at once, the
// most write transactions a run makes, and so the most contention.
constexpr int kLogEvery = 1;
// What a window records besides its step rows (core/engine/train/log_window.cpp and trainer.cpp's flush_window).
const std::vector<std::string> kWindowMetrics = {"train/loss", "train/learning_rate", "train/top1", "train/top5",
                                                  "train/reg_loss"};

std::string recipe(const ScratchDir& dir) {
  return dir.write("writer.toml", R"(schema_version = 1
[run]
name = "writer"
batch_size = 8
max_steps = )" + std::to_string(kSteps) + R"(
log_every = )" + std::to_string(kLogEvery) + R"(
threads = 1
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 512
test_size = 64
[model]
plugin = "lenet"
[optimizer]
plugin = "sgd"
lr = 0.01
[eval]
enabled = false
[checkpoint]
dir = ")" + dir.file("checkpoints") + R"("
at_end = false
every_epochs = 0
[log]
flush_secs = 0.1
)");
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// What the queries made of the store while the writers worked.
struct Reads {
  int answered = 0;                   // queries that exited 0 with JSON
  std::vector<std::string> failures;  // command and output of each query that failed otherwise
};

// Runs the queries over and over until the writers are done. Until a query
// has seen a run, it may only say that there is none yet (no file, no
// schema, no run): the writers create all three.
Reads read_while(const std::string& db, const std::atomic<bool>& writers_done) {
  Reads reads;
  bool saw_a_run = false;
  const std::vector<std::string> queries = {"runs --format json", "report throughput --last 4 --format json"};
  while (!writers_done.load()) {
    for (const std::string& query : queries) {
      const auto result = run_orchestrate(query + " --db " + db);
      if (result.exit_code == 0 && nlohmann::json::accept(result.output)) {
        ++reads.answered;
        saw_a_run = saw_a_run || !nlohmann::json::parse(result.output).empty();
        continue;
      }
      const bool none_yet = result.output.find("no run store here") != std::string::npos ||
                            result.output.find("is empty") != std::string::npos ||
                            result.output.find("no run matches") != std::string::npos;
      if (saw_a_run || !none_yet)
        reads.failures.push_back(query + " (exit " + std::to_string(result.exit_code) + "): " + result.output);
    }
  }
  return reads;
}

TEST(ConcurrentRuns, FourRunsWritingOneStoreLoseNoRowsWhileQueriesRead) {
  ScratchDir dir;
  const std::string db = dir.file("sweep.db");
  const std::string path = recipe(dir);

  std::atomic<bool> writers_done{false};
  auto reader = std::async(std::launch::async, [&] { return read_while(db, writers_done); });
  std::vector<std::future<CommandResult>> writers;
  for (int w = 1; w <= kWriters; ++w) {
    writers.push_back(std::async(std::launch::async, [&, w] {
      return run_orchestrate("run " + path + " --db " + db + " --quiet --set run.name=w" + std::to_string(w));
    }));
  }
  std::vector<CommandResult> results;
  for (auto& writer : writers) results.push_back(writer.get());
  writers_done = true;
  const Reads reads = reader.get();

  for (const CommandResult& result : results) {
    EXPECT_EQ(result.exit_code, 0) << result.output;
    const std::string said = lower(result.output);
    EXPECT_EQ(said.find("locked"), std::string::npos) << result.output;
    EXPECT_EQ(said.find("busy"), std::string::npos) << result.output;
  }
  EXPECT_TRUE(reads.failures.empty()) << reads.failures.size() << " queries failed, the first: " << reads.failures[0];
  EXPECT_GT(reads.answered, 0) << "no query answered while the runs were writing";

  SQLite::Database store(db, SQLite::OPEN_READONLY);
  SQLite::Statement runs(store, "SELECT id, name, status FROM runs ORDER BY name");
  std::vector<std::string> names;
  while (runs.executeStep()) {
    const std::int64_t id = runs.getColumn(0).getInt64();
    const std::string name = runs.getColumn(1).getString();
    names.push_back(name);
    EXPECT_EQ(runs.getColumn(2).getString(), "finished") << name;

    SQLite::Statement steps(store,
                            "SELECT count(*), count(DISTINCT step), min(step), max(step) FROM step_timings"
                            " WHERE run_id = ?");
    steps.bind(1, id);
    ASSERT_TRUE(steps.executeStep());
    EXPECT_EQ(steps.getColumn(0).getInt(), kSteps) << name << ": every step once";
    EXPECT_EQ(steps.getColumn(1).getInt(), kSteps) << name;
    EXPECT_EQ(steps.getColumn(2).getInt(), 1) << name;
    EXPECT_EQ(steps.getColumn(3).getInt(), kSteps) << name;

    std::map<std::string, int> metrics;
    SQLite::Statement counts(store,
                             "SELECT name, count(DISTINCT step), count(*) FROM metrics WHERE run_id = ? GROUP BY name");
    counts.bind(1, id);
    while (counts.executeStep()) {
      EXPECT_EQ(counts.getColumn(1).getInt(), counts.getColumn(2).getInt())
          << name << ": " << counts.getColumn(0).getString() << " recorded twice at a step";
      metrics[counts.getColumn(0).getString()] = counts.getColumn(2).getInt();
    }
    for (const std::string& metric : kWindowMetrics)
      EXPECT_EQ(metrics[metric], kSteps / kLogEvery) << name << ": " << metric;
    EXPECT_EQ(metrics["time/setup_s"], 1) << name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"w1", "w2", "w3", "w4"}));
}

// Two stores in one directory count their runs from 1 each: their
// checkpoints go under the store's own name, so neither overwrites the
// other's run 1, and each --resume takes up its own run from its own
// weights.
TEST(ConcurrentRuns, TwoStoresInOneDirectoryKeepTheirCheckpointsApart) {
  ScratchDir dir;
  const std::string recipe = dir.write("two.toml", small_lenet_recipe("max_steps = 4\n", "sgd", ""));
  // Different seeds: different weights, so a checkpoint says whose it is.
  auto first = std::async(std::launch::async, [&] {
    return run_orchestrate("run " + recipe + " --quiet --set run.seed=1 --db " + dir.file("a.db"));
  });
  auto second = std::async(std::launch::async, [&] {
    return run_orchestrate("run " + recipe + " --quiet --set run.seed=2 --db " + dir.file("b.db"));
  });
  const CommandResult a = first.get(), b = second.get();
  ASSERT_EQ(a.exit_code, 0) << a.output;
  ASSERT_EQ(b.exit_code, 0) << b.output;
  const std::string a_weights = dir.file("checkpoints/a.db/run-1/step-00000004");
  const std::string b_weights = dir.file("checkpoints/b.db/run-1/step-00000004");
  EXPECT_NE(a.output.find("checkpoint " + a_weights), std::string::npos) << a.output;
  EXPECT_NE(b.output.find("checkpoint " + b_weights), std::string::npos) << b.output;
  const auto model_bytes = [](const std::string& checkpoint) {
    return file_bytes(checkpoint + "/model.safetensors");
  };
  ASSERT_FALSE(model_bytes(a_weights).empty());
  EXPECT_NE(model_bytes(a_weights), model_bytes(b_weights));

  for (const auto& [store, seed, weights] : {std::tuple{std::string("a.db"), 1, a_weights},
                                             std::tuple{std::string("b.db"), 2, b_weights}}) {
    const auto resumed = run_orchestrate("run " + recipe + " --resume 1 --set run.seed=" + std::to_string(seed) +
                                         " --db " + dir.file(store));
    ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
    EXPECT_NE(resumed.output.find("resuming run 1 from step 4 of 4 (checkpoint " + weights + ")"), std::string::npos)
        << resumed.output;
  }
}

}  // namespace
}  // namespace orchestrate::testing
