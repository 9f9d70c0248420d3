// Checkpoints through the CLI, as a user meets them: Ctrl-C saves one, `run
// --resume` continues the run to the weights an uninterrupted run reaches,
// `checkpoints` lists them, `weights` exports and lists them, and bad input
// gets one line and the documented exit code.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "build_paths.h"
#include "command_runner.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

// 4096 images, micro-batches of 16, two per update: 128 updates per epoch.
const std::string kRecipe = R"(schema_version = 1
[run]
name = "cli_resume"
batch_size = 16
epochs = 2
log_every = 1
threads = 1
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 4096
test_size = 128
[model]
plugin = "lenet"
[optimizer]
plugin = "momentum"
lr = 0.05
[[optimizer.wrappers]]
plugin = "batch_gradients"
num_batches = 2
[log]
flush_secs = 0.1
)";

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The model.safetensors of the run's final checkpoint.
std::string final_weights(const std::string& db, std::int64_t run_id) {
  const auto rows = RunStore(db).checkpoints(run_id);
  EXPECT_FALSE(rows.empty());
  if (rows.empty()) return "";
  EXPECT_EQ(rows.back().reason, "end");
  return read_bytes(fs::path(rows.back().path) / "model.safetensors");
}

// `orchestrate ARGUMENTS --quiet` in the background, sent `signal` (INT,
// USR1, ...) once `db` shows it training (more than 3 step rows); its output
// (stderr too) and then "exit=N".
CommandResult run_and_signal(const std::string& arguments, const std::string& db, const std::string& signal) {
  return run_shell("env -u ORCHESTRATE_PLUGIN_PATH " + std::string(orchestrate::build_paths::kOrchestrateBin) + " " + arguments +
                   " --quiet 2>&1 & pid=$!; until [ \"$(sqlite3 " + db +
                   " 'select count(*) from step_timings' 2>/dev/null)\" -gt 3 ] 2>/dev/null; do sleep 0.05; done; "
                   "kill -" + signal + " $pid; wait $pid; echo \"exit=$?\"");
}

// The message of run 1's "interrupted" event in `store`; "" when it has none.
std::string interrupted_event(const RunStore& store) {
  for (const auto& event : store.events(1))
    if (event.kind == "interrupted") return event.message;
  return "";
}

// SLURM's warning before a time limit (sbatch --signal=USR1@90): the run
// saves a checkpoint and stops as on Ctrl-C, so the requeued job resumes.
TEST(CheckpointCli, SigUsr1SavesACheckpointAndStopsAsBeforeATimeLimit) {
  ScratchDir dir;
  const auto recipe = dir.write("usr1.toml", kRecipe);
  const auto db = dir.file("runs.db");
  const auto stopped = run_and_signal("run " + recipe + " --db " + db, db, "USR1");
  ASSERT_NE(stopped.output.find("exit=130"), std::string::npos) << stopped.output;
  const RunStore store(db, StoreAccess::read_only);
  const std::string interrupted = interrupted_event(store);
  EXPECT_EQ(interrupted.rfind("stopped by SIGUSR1 (a batch system's warning before its time limit) at step ", 0), 0u)
      << interrupted;
  const auto checkpoints = store.checkpoints(1);
  ASSERT_EQ(checkpoints.size(), 1u);
  EXPECT_EQ(checkpoints[0].reason, "signal");
}

// A preempted job is restarted with the command it was first started with,
// `--resume auto`: the first start begins the run; after kill -9 and after
// SIGUSR1 the same command continues it from its newest checkpoint.
TEST(CheckpointCli, TheSameResumeAutoCommandStartsAndThenContinues) {
  ScratchDir dir;
  const auto recipe = dir.write("again.toml", kRecipe);
  const auto db = dir.file("runs.db");
  const std::string command = "run " + recipe + " --db " + db + " --resume auto";
  // The first start, preempted (SIGUSR1) once it trains.
  const auto first = run_and_signal(command, db, "USR1");
  ASSERT_NE(first.output.find("exit=130"), std::string::npos) << first.output;
  EXPECT_NE(first.output.find("has a checkpoint yet; starting it afresh"), std::string::npos) << first.output;
  // The same command, killed outright (kill -9) once it is under way again.
  const auto killed = run_and_signal(command, db, "KILL");
  ASSERT_NE(killed.output.find("exit=137"), std::string::npos) << killed.output;
  // And once more: the same run, continued to its end.
  const auto again = run_orchestrate(command + " --quiet");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("run 1 'cli_resume' finished after 256 steps"), std::string::npos) << again.output;
  // Its first line says what it continues, --quiet or not.
  EXPECT_EQ(again.output.rfind("resuming run 1 from step ", 0), 0u) << again.output;
  EXPECT_NE(again.output.find(" of 256"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("(checkpoint "), std::string::npos) << again.output;
  EXPECT_EQ(RunStore(db, StoreAccess::read_only).list_runs().size(), 1u);
  // The same command once the run has finished: nothing to train, and its
  // end checkpoint is not saved a second time.
  const auto checkpoints_before = RunStore(db, StoreAccess::read_only).checkpoints(1).size();
  const auto finished = run_orchestrate(command + " --quiet");
  ASSERT_EQ(finished.exit_code, 0) << finished.output;
  EXPECT_NE(finished.output.find("resuming run 1 from step 256 of 256"), std::string::npos) << finished.output;
  EXPECT_NE(finished.output.find("run had already finished at step 256: nothing to train"), std::string::npos)
      << finished.output;
  EXPECT_EQ(RunStore(db, StoreAccess::read_only).checkpoints(1).size(), checkpoints_before);
}

// The --nproc launcher passes SIGUSR1 on to its workers: the job stops as one.
// A bare --resume continues the user's newest run of the recipe, not a
// sweep's trial of it that came later (`sweep --resume` continues those).
TEST(CheckpointCli, ABareResumePassesOverASweepsTrials) {
  ScratchDir dir;
  const auto recipe = dir.write("swept.toml", kRecipe);
  const std::string command = "run " + recipe + " --db " + dir.file("runs.db") + " --quiet --set run.max_steps=4";
  ASSERT_EQ(run_orchestrate(command).exit_code, 0);
  const auto trial = run_orchestrate(command + " --tag sweep=lr --tag sweep_id=1 --tag trial=0");
  ASSERT_EQ(trial.exit_code, 0) << trial.output;
  ASSERT_NE(trial.output.find("run 2 "), std::string::npos) << trial.output;
  const auto resumed = run_orchestrate(command + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(resumed.output.rfind("resuming run 1 from step 4 of 4", 0), 0u) << resumed.output;
}

// "Try 8 updates, then train on": a resume may lengthen the run when the
// schedule gives the updates done the learning rates they would have had in
// the longer run, and then reaches that run's weights bit for bit; with a
// schedule that spans the run (cosine) it says why not.
TEST(CheckpointCli, AResumeLengthensTheRunWhereTheScheduleAllows) {
  ScratchDir dir;
  const auto recipe = dir.write("lengthen.toml", kRecipe);
  const std::string db = " --db " + dir.file("runs.db") + " --quiet";
  ASSERT_EQ(run_orchestrate("run " + recipe + db + " --set run.max_steps=8").exit_code, 0);
  const auto longer = run_orchestrate("run " + recipe + db + " --set run.max_steps=16 --resume 1");
  ASSERT_EQ(longer.exit_code, 0) << longer.output;
  EXPECT_EQ(longer.output.rfind("resuming run 1 from step 8 of 16", 0), 0u) << longer.output;
  EXPECT_NE(longer.output.find("run 1 'cli_resume' finished after 16 steps"), std::string::npos) << longer.output;
  const auto straight_db = dir.file("straight/runs.db");
  ASSERT_EQ(run_orchestrate("run " + recipe + " --db " + straight_db + " --quiet --set run.max_steps=16").exit_code, 0);
  EXPECT_EQ(final_weights(dir.file("runs.db"), 1), final_weights(straight_db, 1));

  const std::string cosine = " --set schedule.plugin=cosine";
  ASSERT_EQ(run_orchestrate("run " + recipe + db + cosine + " --set run.max_steps=8").exit_code, 0);
  const auto refused = run_orchestrate("run " + recipe + db + cosine + " --set run.max_steps=16 --resume 2");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find(": run.max_steps: 8 -> 16 (the schedule spans the run, so update 2 of the 8 done "
                                "would have had learning rate "),
            std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("resume with the checkpoint's values (--set run.max_steps=8)"), std::string::npos)
      << refused.output;
}

TEST(CheckpointCli, SigUsr1ToTheLauncherStopsEveryWorker) {
  ScratchDir dir;
  const auto recipe = dir.write("usr1.toml", kRecipe);
  const auto db = dir.file("runs.db");
  const auto stopped = run_and_signal("run " + recipe + " --nproc 2 --db " + db, db, "USR1");
  ASSERT_NE(stopped.output.find("exit=130"), std::string::npos) << stopped.output;
  const RunStore store(db, StoreAccess::read_only);
  EXPECT_EQ(store.find_run("1")->status, "interrupted");
  EXPECT_EQ(interrupted_event(store).rfind("stopped by SIGUSR1", 0), 0u) << stopped.output;
}

// Stopped by a signal, the ranks agree on it one update late (rank_messages.h)
// and all save at that update; resumed, the job still ends bit for bit
// where an uninterrupted one does.
TEST(CheckpointCli, AJobStoppedBySigUsr1ResumesToTheUninterruptedJobsWeights) {
  ScratchDir dir;
  const auto recipe = dir.write("job.toml", kRecipe);
  const auto reference_db = dir.file("reference/runs.db");
  const auto reference = run_orchestrate("run " + recipe + " --nproc 2 --db " + reference_db + " --quiet");
  ASSERT_EQ(reference.exit_code, 0) << reference.output;

  const auto db = dir.file("runs.db");
  const auto stopped = run_and_signal("run " + recipe + " --nproc 2 --db " + db, db, "USR1");
  ASSERT_NE(stopped.output.find("exit=130"), std::string::npos) << stopped.output;
  const auto checkpoints = RunStore(db, StoreAccess::read_only).checkpoints(1);
  ASSERT_EQ(checkpoints.size(), 1u);
  EXPECT_EQ(checkpoints[0].reason, "signal");
  EXPECT_LT(checkpoints[0].step, 128) << "the job was to be stopped early, not at its end";

  const auto resumed = run_orchestrate("run " + recipe + " --nproc 2 --db " + db + " --quiet --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(final_weights(db, 1), final_weights(reference_db, 1));
}

TEST(CheckpointCli, CtrlCSavesAndResumeReachesTheUninterruptedWeights) {
  ScratchDir dir;
  const auto recipe = dir.write("resume.toml", kRecipe);
  const auto reference_db = dir.file("reference/runs.db");
  // Both with a --set, which the resume must repeat.
  const std::string lr = " --set optimizer.lr=0.04";
  const auto reference = run_orchestrate("run " + recipe + " --db " + reference_db + lr + " --quiet");
  ASSERT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_NE(reference.output.find("checkpoint " + dir.file("reference/checkpoints/runs.db/run-1/step-00000256")),
            std::string::npos)
      << reference.output;

  // SIGINT once step rows show the run is training.
  const auto db = dir.file("runs.db");
  const auto stopped = run_and_signal("run " + recipe + " --db " + db + lr, db, "INT");
  ASSERT_NE(stopped.output.find("exit=130"), std::string::npos) << stopped.output;
  const std::string hint = "continue it with --resume: orchestrate ";
  const auto said = stopped.output.find(hint);
  ASSERT_NE(said, std::string::npos) << stopped.output;
  const auto line_end = stopped.output.find('\n', said);
  const std::string resume_command = stopped.output.substr(said + hint.size(), line_end - said - hint.size());
  EXPECT_TRUE(resume_command.starts_with("run " + recipe + " --db " + db + lr) &&
              resume_command.ends_with(" --resume 1"))
      << "the user's own command: " << resume_command;

  const auto listed = run_orchestrate("checkpoints cli_resume --db " + db + " --format json");
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  const auto rows = nlohmann::json::parse(listed.output);
  ASSERT_EQ(rows.size(), 1u) << listed.output;
  EXPECT_EQ(rows[0]["reason"], "signal");
  EXPECT_EQ(rows[0]["on_disk"], true);

  // Without the --set, every change is named in one line with what restores it.
  const auto changed = run_orchestrate("run " + recipe + " --db " + db + " --quiet --resume --set run.seed=9");
  EXPECT_EQ(changed.exit_code, 2) << changed.output;
  EXPECT_EQ(std::count(changed.output.begin(), changed.output.end(), '\n'), 1) << changed.output;
  EXPECT_NE(changed.output.find("optimizer.lr: 0.04 -> 0.05; run.seed: 42 -> 9 change the training trajectory; "
                                "resume with the checkpoint's values (--set optimizer.lr=0.04 --set run.seed=42)"),
            std::string::npos)
      << changed.output;

  const auto resumed = run_orchestrate(resume_command);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("run 1 'cli_resume' finished after 256 steps"), std::string::npos) << resumed.output;
  EXPECT_EQ(final_weights(db, 1), final_weights(reference_db, 1));
  EXPECT_EQ(RunStore(db).step_timings(1).size(), 256u);

  // The weights, for other tools.
  const auto exported = dir.file("lenet.safetensors");
  const auto export_result = run_orchestrate("weights export 1 " + exported + " --db " + db);
  ASSERT_EQ(export_result.exit_code, 0) << export_result.output;
  const auto list_result = run_orchestrate("weights list " + exported);
  ASSERT_EQ(list_result.exit_code, 0) << list_result.output;
  EXPECT_NE(list_result.output.find("fc3.weight"), std::string::npos) << list_result.output;
  EXPECT_NE(list_result.output.find("[10, 84]"), std::string::npos) << list_result.output;
  EXPECT_NE(list_result.output.find("10 tensors"), std::string::npos) << list_result.output;
}

TEST(CheckpointCli, BadCheckpointInputGetsOneLineAndItsExitCode) {
  ScratchDir dir;
  const auto recipe = dir.write("resume.toml", kRecipe);
  const auto db = dir.file("runs.db");
  ASSERT_EQ(run_orchestrate("run " + recipe + " --db " + db + " --quiet --set run.epochs=1").exit_code, 0);

  const auto no_run = run_orchestrate("run " + recipe + " --db " + db + " --quiet --resume 99");
  EXPECT_EQ(no_run.exit_code, 2);
  EXPECT_NE(no_run.output.find("--resume 99: no such checkpoint directory, and no run with that id or name"),
            std::string::npos)
      << no_run.output;

  const auto missing = run_orchestrate("run " + recipe + " --dry-run --set checkpoint.init_from=" +
                                       dir.file("nowhere.safetensors"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("nowhere.safetensors\" does not exist"), std::string::npos) << missing.output;

  // A checkpoint of an unfinished copy: truncated weights.
  const auto checkpoint = RunStore(db).checkpoints(1).back().path;
  fs::resize_file(fs::path(checkpoint) / "model.safetensors", 100);
  const auto truncated = run_orchestrate("run " + recipe + " --db " + db + " --quiet --resume " + checkpoint);
  EXPECT_EQ(truncated.exit_code, 1);
  EXPECT_NE(truncated.output.find("is damaged: model.safetensors has 100 bytes"), std::string::npos)
      << truncated.output;
  EXPECT_EQ(RunStore(db).find_run("1")->status, "finished");  // untouched

  const auto described = run_orchestrate("describe model lenet");
  EXPECT_NE(described.output.find("logits pattern (\"@logits\" in [checkpoint] exclude): \"fc3.*\""),
            std::string::npos)
      << described.output;

  const auto not_weights = run_orchestrate("weights list " + recipe);
  EXPECT_EQ(not_weights.exit_code, 2);
  EXPECT_NE(not_weights.output.find("is neither a checkpoint directory nor a .safetensors file"), std::string::npos)
      << not_weights.output;
}

}  // namespace
}  // namespace orchestrate::testing
