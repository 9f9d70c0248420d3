#include <unistd.h>

#include <cmath>
#include <csignal>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analysis/reports.h"
#include "analysis/run_summary.h"
#include "checkpoint/checkpointer.h"
#include "checkpoint/resume.h"
#include "cli/command.h"
#include "cli/data_parallel_launch.h"
#include "cli/options.h"
#include "cli/plugin_options.h"
#include "cli/shipped_recipes.h"
#include "cli/tag_argument.h"
#include "distributed/collective.h"
#include "distributed/launch_environment.h"
#include "engine/recipe/recipe.h"
#include "engine/recipe/recipe_settings.h"
#include "engine/setup/compute_setup.h"
#include "engine/setup/device.h"
#include "engine/setup/smoke_overrides.h"
#include "engine/train/run_hooks.h"
#include "engine/train/trainer.h"
#include "export/tensorboard/live_run_events.h"
#include "orchestrate/error.h"
#include "orchestrate/shell_word.h"
#include "store/run_store.h"

namespace orchestrate::cli {

namespace {

// `files_removed`: a finished smoke run's checkpoints and exports, in its
// scratch directory, are removed next; their paths are not printed.
// `resume_command`: the user's command without --resume, to which --resume ID continues the run.
void print_outcome(const TrainOutcome& outcome, const Recipe& recipe, const RunStore& store, bool files_removed,
                   const std::string& resume_command) {
  std::cout << "run " << outcome.run_id << " '" << recipe.run_name() << "' " << to_string(outcome.status) << " after "
            << outcome.steps << " steps in " << std::fixed << std::setprecision(1) << outcome.wall_s << " s\n";
  std::string metrics;
  for (const char* metric : {"eval/top1", "eval/top5", "eval/loss", "train/loss"}) {
    if (auto it = outcome.final_metrics.find(metric); it != outcome.final_metrics.end()) {
      std::ostringstream value;
      value << std::fixed << std::setprecision(4) << it->second;
      metrics += "  " + std::string(metric) + " " + value.str();
    }
  }
  if (!metrics.empty()) std::cout << metrics << "\n";
  if (!outcome.checkpoint.empty() && !files_removed) std::cout << "checkpoint " << outcome.checkpoint << "\n";
  if (!outcome.exported.empty() && !files_removed) std::cout << "serving export " << outcome.exported << "\n";
  if (outcome.status == RunStatus::interrupted && !outcome.checkpoint.empty())
    std::cout << "continue it with --resume: " << resume_command << " --resume " << outcome.run_id << "\n";
  std::cout << "recorded in " << store.path() << "\n\n";
  if (auto summary = store.find_run(std::to_string(outcome.run_id))) {
    const ThroughputRow row = throughput_of(store, *summary);
    std::cout << run_summary(row, bottleneck_verdict(row, run_facts(store, *summary)),
                             "orchestrate report throughput " + std::to_string(outcome.run_id) + " --db " +
                                 shell_word(store.path()));
  }
}

// --format json: the outcome as one JSON object on stdout, for a sweep
// script to read instead of scraping the text (full-precision numbers, null
// for what there is none of).
void print_outcome_json(const TrainOutcome& outcome, const Recipe& recipe, const RunStore& store) {
  const auto text_or_null = [](const std::string& text) { return text.empty() ? nlohmann::json() : nlohmann::json(text); };
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [name, value] : outcome.final_metrics)
    metrics[name] = std::isfinite(value) ? nlohmann::json(value) : nlohmann::json();
  const nlohmann::json object = {{"run_id", outcome.run_id},
                                 {"name", recipe.run_name()},
                                 {"status", to_string(outcome.status)},
                                 {"steps", outcome.steps},
                                 {"wall_s", outcome.wall_s},
                                 {"resumed", outcome.resumed},
                                 {"checkpoint", text_or_null(outcome.checkpoint)},
                                 {"serving_export", text_or_null(outcome.exported)},
                                 {"db", store.path()},
                                 {"final_metrics", metrics}};
  std::cout << object.dump(2) << "\n";
}

// [log] tensorboard: the leader's store tells a live event writer every row
// and metric it records (live_run_events.h). A write that fails later (a
// full disk) costs the live view, never the run: one warning, then no more.
void follow_in_tensorboard(RunStore& store, const Recipe& recipe, const std::string& directory,
                           std::shared_ptr<tensorboard::LiveRunEvents>& events) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  events = std::make_shared<tensorboard::LiveRunEvents>(directory, recipe.run_name(), host, recipe.flattened());
  auto failed = std::make_shared<bool>(false);
  const auto guarded = [events, failed](auto&& write) {
    if (*failed) return;
    try {
      write();
    } catch (const std::exception& error) {
      *failed = true;
      std::cerr << "warning: [log] tensorboard: " << error.what() << "; the live events stop here (the run goes on)\n";
    }
  };
  store.observe({[events, guarded](std::int64_t run_id, const StepTiming& row) {
                   guarded([&] { events->step(run_id, row); });
                 },
                 [events, guarded](std::int64_t run_id, std::int64_t step, const MetricValues& values) {
                   guarded([&] { events->metrics(run_id, step, values); });
                 }});
}

// What the user typed: the workers of --nproc N run without --nproc (the
// parent took it), so the job's recorded command line gets it back, and
// `rerun` starts the same number of workers.
std::string recorded_command_line(const std::vector<std::string>& arguments) {
  std::string line = command_line_of("run", arguments);
  const LaunchEnvironment launched = read_launch_environment();
  if (launched.distributed() && launched.launcher == "orchestrate")
    line += " --nproc " + std::to_string(launched.local_world_size);
  return line;
}

// The store a rank other than 0 records into: its own scratch file, removed
// when the rank ends. Rank 0's store is the job's record; the other ranks take
// the same steps and their rows would only repeat rank 0's.
class ScratchStore {
 public:
  explicit ScratchStore(int rank)
      : path_((std::filesystem::temp_directory_path() /
               ("orchestrate-rank" + std::to_string(rank) + "-" + std::to_string(::getpid()) + ".db"))
                  .string()),
        store_(std::make_unique<RunStore>(path_)) {}
  ~ScratchStore() {
    store_.reset();
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path_ + suffix, ignored);
  }
  RunStore& store() { return *store_; }

 private:
  std::string path_;
  std::unique_ptr<RunStore> store_;
};

// Joins the data-parallel job a launcher (--nproc, torchrun, srun, mpirun)
// started this process in; nullptr when it was started alone.
std::unique_ptr<Collective> join_job(const Recipe& recipe) {
  const LaunchEnvironment job = read_launch_environment();
  if (!job.distributed()) return nullptr;
  const Settings& s = settings_of(recipe);
  CollectiveOptions options;
  options.backend = s.distributed.backend;
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(s.distributed.timeout_s * 1000));
  return std::make_unique<Collective>(job, training_device(s, job), options);
}

// Where a smoke run's checkpoints and exports go: a directory of this
// process under the system's temporary directory, left for a look afterwards.
std::string smoke_scratch_dir(const std::string& recipe_path) {
  return (std::filesystem::temp_directory_path() / "orchestrate-smoke" /
          (std::filesystem::path(recipe_path).stem().string() + "-" + std::to_string(::getpid())))
      .string();
}

// A smoke run's scratch directory once its files have served (a VGG16
// smoke run leaves 2 GB of checkpoint and stand-in weights).
void remove_scratch(const std::optional<SmokeOverrides>& smoke) {
  if (!smoke) return;
  std::error_code ignored;
  std::filesystem::remove_all(smoke->scratch_dir(), ignored);
}

}  // namespace

int run_command(const std::vector<std::string>& arguments) {
  po::options_description options("run options");
  options.add_options()("recipe", po::value<std::string>()->required(),
                        "recipe TOML file, or the name of a shipped recipe (orchestrate recipes)")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a recipe value, e.g. --set optimizer.lr=0.01 (repeatable)")(
      "dry-run", po::bool_switch(), "validate the recipe and print it resolved (defaults filled in); train nothing")(
      "smoke", po::bool_switch(),
      "a smoke run: the same components on mock data of the recipe's classes and channels, small images, "
      "2 updates of 2 images, files in a scratch directory; tagged smoke=true")(
      "quiet,q", po::bool_switch(), "no progress line")(
      "resume", po::value<std::string>()->implicit_value(""),
      "continue a run from a checkpoint: --resume or --resume auto (the newest checkpoint of this recipe's "
      "newest run; none yet: start it), --resume RUN, or --resume CHECKPOINT_DIR")(
      "tag", po::value<std::vector<std::string>>()->composing(),
      "label the run key=value, for orchestrate runs --tag (repeatable)")(
      "rerun-of", po::value<std::string>(),
      "internal: the run this one repeats, recorded as its source (orchestrate rerun RUN sets it)")(
      "sync-debug", po::value<std::string>(),
      "CUDA: fail (error) or warn (warn) when a steady training step waits for the device, as "
      "torch.cuda.set_sync_debug_mode does; log points, checkpoints and evaluation are not checked")(
      "nproc", po::value<int>()->default_value(1),
      "data-parallel: run this command as N worker processes on this machine, their output prefixed [rank N]");
  add_outcome_format_option(options, "run");
  add_plugin_path_option(options);
  add_db_option(options);
  po::positional_options_description positional;
  positional.add("recipe", 1);
  po::variables_map values;
  if (!parse_options("run", "RECIPE [options]", options, positional, arguments, values)) return 0;
  const int nproc = values["nproc"].as<int>();
  check_nproc(nproc);
  RunInvocation invocation{recorded_command_line(arguments), {}};
  if (values.count("tag")) invocation.tags = parse_tags(values["tag"].as<std::vector<std::string>>());
  const bool smoke = values["smoke"].as<bool>();
  if (smoke) invocation.tags.emplace_back("smoke", "true");

  const auto overrides =
      parse_overrides(values.count("set") ? values["set"].as<std::vector<std::string>>() : std::vector<std::string>{});
  Registry registry;  // declared first: outlives every object its plugins create
  const std::vector<std::string> plugin_warnings = load_all_plugins(registry, values);
  const std::string recipe_path = recipe_file_or_shipped(values["recipe"].as<std::string>());
  std::optional<SmokeOverrides> smoke_overrides;
  if (smoke) smoke_overrides.emplace(registry, smoke_scratch_dir(recipe_path));
  RecipeReshape shrink;
  if (smoke_overrides) shrink = [&](toml::table& root) { smoke_overrides->apply(root); };
  const Recipe recipe = load_recipe(recipe_path, overrides, registry, shrink);
  if (smoke_overrides)
    for (const auto& note : smoke_overrides->notes()) std::cerr << "smoke: " << note << "\n";
  for (const auto& note : recipe.notes) std::cerr << "orchestrate: note: " << note << "\n";
  // The rules across tables ([dim_reduce] with wrappers, ...): before any file is written.
  const Settings& settings = settings_of(recipe);
  if (values["dry-run"].as<bool>()) {
    std::cout << recipe.resolved_toml();
    remove_scratch(smoke_overrides);
    return 0;
  }
  // The recipe is valid (its errors come once, from here, not from every
  // worker) and nothing is recorded yet: the workers do the rest.
  if (nproc > 1) {
    if (select_device(settings.run.device).is_cuda()) worker_cuda_device(nproc - 1, nproc);  // a GPU each
    remove_scratch(smoke_overrides);  // each worker makes its own
    return run_local_workers(nproc, arguments_without(arguments, options, positional, "nproc"));
  }

  // Joined before the store is touched: a rendezvous that fails leaves no run row.
  const std::unique_ptr<Collective> collective = join_job(recipe);
  const bool leader = !collective || collective->rank() == 0;
  // A live TensorBoard directory that cannot be made is a usage error before any run row.
  if (leader && !settings.tensorboard.empty()) {
    std::error_code error;
    std::filesystem::create_directories(settings.tensorboard, error);
    if (error)
      throw UsageError("[log] tensorboard = \"" + settings.tensorboard + "\": cannot make it (" + error.message() +
                       "); give a directory you can write");
  }
  RunStore store(db_path(values, recipe.table("log").core.string("db")));
  std::shared_ptr<tensorboard::LiveRunEvents> live_events;
  if (leader && !settings.tensorboard.empty()) follow_in_tensorboard(store, recipe, settings.tensorboard, live_events);
  if (values.count("rerun-of"))
    invocation.source_run_id = find_run_or_throw(store, values["rerun-of"].as<std::string>()).id;
  store.set_invocation(std::move(invocation));
  std::optional<ScratchStore> scratch;
  if (!leader) scratch.emplace(collective->rank());
  TrainOptions train_options;
  train_options.plugin_warnings = plugin_warnings;
  if (values.count("sync-debug")) train_options.sync_debug = parse_sync_debug(values["sync-debug"].as<std::string>());
  train_options.collective = collective.get();
  // The job's store, on every rank (ranks 1.. record into scratch stores).
  train_options.artifact_root = directory_beside_store(store.path(), kArtifactDirectory);
  train_options.job_store_path = store.path();
  if (!values["quiet"].as<bool>() && leader) {
    train_options.progress = &std::cerr;
    train_options.progress_is_terminal = isatty(STDERR_FILENO) != 0;
  }
  if (values.count("resume")) {
    train_options.resume_from = resolve_resume_target(values["resume"].as<std::string>(), recipe, store);
    if (train_options.resume_from.empty() && leader)
      std::cerr << "--resume: no run of " << recipe.path << " in " << store.path()
                << " has a checkpoint yet; starting it afresh\n";
  }
  // A launcher sends SIGTERM to every rank as soon as one fails, often just
  // as this rank fails on its own; once training has ended (its handlers are
  // gone) such a signal must not kill the rank before it prints why it failed.
  if (collective) {
    std::signal(SIGTERM, SIG_IGN);
    std::signal(SIGINT, SIG_IGN);
  }
  const TrainOutcome outcome = train(recipe, registry, scratch ? scratch->store() : store, train_options);
  if (leader && wants_json(values)) print_outcome_json(outcome, recipe, store);
  else if (leader)
    print_outcome(outcome, recipe, store, smoke_overrides && outcome.status == RunStatus::finished,
                  recorded_command_line(arguments_without(arguments, options, positional, "resume")));
  if (outcome.status == RunStatus::finished) remove_scratch(smoke_overrides);  // kept to look at otherwise
  return outcome.status == RunStatus::interrupted ? static_cast<int>(ExitCode::interrupted) : 0;
}

}  // namespace orchestrate::cli
