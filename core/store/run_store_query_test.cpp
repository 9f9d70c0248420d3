// The query side of the run store: filters, sorting, tags, one run's details,
// and reading a store read-only (an older schema, a file one cannot write).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include "orchestrate/testing/scratch_dir.h"
#include "run_store_sql.h"
#include "store/run_store.h"
#include "store/run_store_schema.h"
#include "store/run_store_test_support.h"

namespace orchestrate {
using testing::error_message_of;
using testing::file_bytes;
using testing::sample_run;
using testing::ScratchDir;
namespace {

std::vector<std::string> names_of(const std::vector<RunSummary>& runs) {
  std::vector<std::string> names;
  for (const RunSummary& run : runs) names.push_back(run.name);
  return names;
}

// Three finished runs and one still running in `path`: a learning-rate sweep
// of two tagged runs and a baseline of another recipe.
void record_sweep(const std::string& path) {
  RunStore store(path);
  auto begin = [&](const std::string& name, const std::string& recipe,
                   std::vector<std::pair<std::string, std::string>> tags) {
    store.set_invocation({"orchestrate run " + recipe, std::move(tags)});
    RunRecord run = sample_run(name);
    run.recipe_path = recipe;
    return store.begin_run(run);
  };
  const auto baseline = begin("baseline", "recipes/resnet50.toml", {});
  store.record_metric(baseline, 10, 1, "eval/top1", 0.70);
  store.finish_run(baseline, RunStatus::finished);
  const auto slow = begin("lr_0.1", "./recipes/fashion_mnist.toml", {{"sweep", "lr"}, {"owner", "ana"}});
  store.record_metric(slow, 10, 1, "eval/top1", 0.80);
  store.record_metric(slow, 20, 2, "eval/top1", 0.85);  // the final value: the highest step
  store.finish_run(slow, RunStatus::finished);
  const auto fast = begin("lr_1.0", "/home/ana/recipes/fashion_mnist.toml", {{"sweep", "lr"}});
  store.record_metric(fast, 10, 1, "eval/top1", 0.60);
  store.finish_run(fast, RunStatus::failed, "diverged");
  begin("42", "recipes/fashion_mnist.toml", {});  // still running, in this process
}

TEST(RunStoreQueryTest, FiltersByNameStatusRecipeSinceAndTags) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  record_sweep(path);
  const RunStore store(path, StoreAccess::read_only);

  EXPECT_EQ(names_of(store.find_runs({})), (std::vector<std::string>{"42", "lr_1.0", "lr_0.1", "baseline"}));
  EXPECT_EQ(names_of(store.find_runs({.name_glob = "lr_*"})), (std::vector<std::string>{"lr_1.0", "lr_0.1"}));
  EXPECT_EQ(names_of(store.find_runs({.status = "failed"})), (std::vector<std::string>{"lr_1.0"}));
  // "42" is stored as running and its heartbeat is fresh: running, not lost.
  EXPECT_EQ(names_of(store.find_runs({.status = "running"})), (std::vector<std::string>{"42"}));
  EXPECT_EQ(names_of(store.find_runs({.status = "lost"})), (std::vector<std::string>{}));
  // By the end of the path, whatever directory the run was started from.
  EXPECT_EQ(names_of(store.find_runs({.recipe = "recipes/fashion_mnist.toml"})),
            (std::vector<std::string>{"42", "lr_1.0", "lr_0.1"}));
  EXPECT_EQ(names_of(store.find_runs({.recipe = "resnet*.toml"})), (std::vector<std::string>{"baseline"}));
  EXPECT_EQ(names_of(store.find_runs({.tags = {{"sweep", "lr"}}})), (std::vector<std::string>{"lr_1.0", "lr_0.1"}));
  EXPECT_EQ(names_of(store.find_runs({.tags = {{"sweep", "lr"}, {"owner", "ana"}}})),
            (std::vector<std::string>{"lr_0.1"}));
  EXPECT_EQ(store.find_runs({.since = "1d"}).size(), 4u);
  EXPECT_EQ(store.find_runs({.since = "2999-01-01"}).size(), 0u);
  EXPECT_EQ(store.find_runs({.since = "2000-01-01T00:00"}).size(), 4u);
  EXPECT_EQ(names_of(store.find_runs({.name_glob = "lr_*", .limit = 1})), (std::vector<std::string>{"lr_1.0"}));

  EXPECT_NE(error_message_of([&] { store.find_runs({.status = "done"}); }).find("known: running, finished"),
            std::string::npos);
  EXPECT_NE(error_message_of([&] { store.find_runs({.since = "yesterday"}); }).find("--since yesterday"),
            std::string::npos);
}

TEST(RunStoreQueryTest, ReadsEveryRunsFinalMetricsAndTags) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  record_sweep(path);
  const RunStore store(path, StoreAccess::read_only);
  const auto runs = store.find_runs({});
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_TRUE(runs[0].final_metrics.empty());
  EXPECT_DOUBLE_EQ(runs[1].final_metrics.at("eval/top1"), 0.60);
  EXPECT_DOUBLE_EQ(runs[2].final_metrics.at("eval/top1"), 0.85);
  EXPECT_DOUBLE_EQ(runs[3].final_metrics.at("eval/top1"), 0.70);
  EXPECT_EQ(runs[2].tags, (std::map<std::string, std::string>{{"owner", "ana"}, {"sweep", "lr"}}));
  EXPECT_TRUE(runs[3].tags.empty());
}

TEST(RunStoreQueryTest, SortsByAFinalMetricHighestFirstRunsWithoutItLast) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  record_sweep(path);
  const RunStore store(path, StoreAccess::read_only);
  EXPECT_EQ(names_of(store.find_runs({.sort_by = "eval/top1"})),
            (std::vector<std::string>{"lr_0.1", "baseline", "lr_1.0", "42"}));
  EXPECT_EQ(names_of(store.find_runs({.sort_by = "eval/top1", .reverse = true})),
            (std::vector<std::string>{"lr_1.0", "baseline", "lr_0.1", "42"}));
  EXPECT_EQ(names_of(store.find_runs({.sort_by = "eval/top1", .limit = 2})),
            (std::vector<std::string>{"lr_0.1", "baseline"}));
  EXPECT_EQ(names_of(store.find_runs({.sort_by = "name"})),
            (std::vector<std::string>{"42", "baseline", "lr_0.1", "lr_1.0"}));
  const std::string typo = error_message_of([&] { store.find_runs({.sort_by = "eval/top5"}); });
  EXPECT_NE(typo.find("--sort eval/top5: not a column"), std::string::npos) << typo;
  EXPECT_NE(typo.find("; did you mean eval/top1? (eval/top1)"), std::string::npos) << typo;
  const std::string bare = error_message_of([&] { store.find_runs({.sort_by = "top1"}); });
  EXPECT_NE(bare.find("; did you mean eval/top1?"), std::string::npos) << "the metric without its group: " << bare;
}

TEST(RunStoreQueryTest, DetailsHoldTheRecordCommandLineAndMetricExtremes) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  record_sweep(path);
  const RunStore store(path, StoreAccess::read_only);
  const auto run = store.find_run("lr_0.1");
  ASSERT_TRUE(run);
  const RunDetails details = store.run_details(*run);
  EXPECT_EQ(details.command_line, "orchestrate run ./recipes/fashion_mnist.toml");
  EXPECT_EQ(details.record.torch_version, "2.11.0");
  EXPECT_EQ(details.record.host, "node7");
  EXPECT_EQ(details.record.device, "cuda:0");
  EXPECT_EQ(details.record.world_size, 8);
  ASSERT_EQ(details.record.plugins.size(), 2u);
  EXPECT_EQ(details.record.plugins[0].name, "lars");
  EXPECT_EQ(details.record.plugins[0].sha256, "ab12");
  EXPECT_NE(details.record.resolved_recipe.find("lr = 0.2"), std::string::npos);
  EXPECT_DOUBLE_EQ(details.metric_extremes.at("eval/top1").min, 0.80);
  EXPECT_DOUBLE_EQ(details.metric_extremes.at("eval/top1").max, 0.85);
}

// A store one migration behind this build's schema, with one finished run.
int make_older_store(const std::string& path) {
  const int older = latest_schema_version() - 1;
  const auto migrations = parse_schema_migrations(kRunStoreSql);
  SQLite::Database old(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  for (int version = 1; version <= older; ++version) old.exec(migrations.at(version - 1).sql);
  old.exec("PRAGMA user_version = " + std::to_string(older));
  old.exec("PRAGMA application_id = " + std::to_string(kRunStoreApplicationId));
  old.exec("INSERT INTO runs (id, name, status, started_at, ended_at) VALUES"
           " (1, 'old', 'finished', '2024-05-01T10:00:00.000Z', '2024-05-01T11:00:00.000Z')");
  return older;
}

TEST(RunStoreQueryTest, ReadOnlyRefusesAnOlderSchemaSayingHowToUpgradeAndChangesNothing) {
  ScratchDir dir;
  const std::string path = dir.file("older.db");
  const int older = make_older_store(path);
  const std::string before = file_bytes(path);

  const std::string message = error_message_of([&] { RunStore store(path, StoreAccess::read_only); });
  EXPECT_NE(message.find(path + " has run-store schema version " + std::to_string(older) +
                         ", older than this orchestrate's " + std::to_string(latest_schema_version())),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("queries never change the file: upgrade it once with `orchestrate store upgrade --db " +
                         path + "` (a run with it does too)"),
            std::string::npos)
      << message;
  EXPECT_EQ(file_bytes(path), before) << "a query must not migrate the store";
  EXPECT_EQ(SQLite::Database(path).execAndGet("PRAGMA user_version").getInt(), older);

  // A writer upgrades it; then queries read it, the old run included.
  { RunStore writer(path); }
  const RunStore reader(path, StoreAccess::read_only);
  EXPECT_EQ(names_of(reader.find_runs({})), (std::vector<std::string>{"old"}));
}

TEST(RunStoreQueryTest, ReadOnlyStoreRefusesToRecordARun) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  record_sweep(path);
  RunStore store(path, StoreAccess::read_only);
  const std::string message = error_message_of([&] { store.begin_run(sample_run("new")); });
  EXPECT_NE(message.find("readonly"), std::string::npos) << message;
}

// Runs `read` as a user who may not write `dir` nor the store in it. Root may
// write any file whatever its mode, so as root the reading happens in a
// child process that has given up root for nobody's uid.
int read_as_a_user_who_cannot_write(const ScratchDir& dir, const std::function<int()>& read) {
  namespace fs = std::filesystem;
  for (const auto& entry : fs::directory_iterator(dir.path()))
    fs::permissions(entry.path(), fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  if (::geteuid() != 0) return read();
  const pid_t child = ::fork();
  if (child == 0) {
    const uid_t nobody = 65534;
    if (::setgid(nobody) != 0 || ::setuid(nobody) != 0) ::_exit(100);
    ::_exit(read());
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

TEST(RunStoreQueryTest, ReadsAStoreInADirectoryItsUserCannotWrite) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  record_sweep(path);  // the writer has closed it: no -wal or -shm file is left
  ASSERT_FALSE(std::filesystem::exists(path + "-wal"));
  const std::string before = file_bytes(path);

  const int exit_code = read_as_a_user_who_cannot_write(dir, [&] {
    try {
      const RunStore store(path, StoreAccess::read_only);
      const auto runs = store.find_runs({.sort_by = "eval/top1"});
      return runs.size() == 4 && runs.front().name == "lr_0.1" ? 0 : 1;
    } catch (const std::exception& error) {
      std::cerr << error.what() << '\n';
      return 2;
    }
  });
  EXPECT_EQ(exit_code, 0) << "1: wrong runs read, 2: the store did not open (see the message above)";
  EXPECT_EQ(file_bytes(path), before);
  std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all);  // so ScratchDir can remove it
}

}  // namespace
}  // namespace orchestrate
