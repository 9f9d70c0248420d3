// `orchestrate sweep SPEC [--dry-run]` and `orchestrate sweep --resume SWEEP`:
// a sweep spec's trials (core/sweep), every one checked before any starts,
// run side by side on this machine's cores or GPUs or as a Slurm job array,
// stopped early by the
// spec's scheduler, recorded in the run store's sweeps tables and ranked by
// the spec's metric. Each trial is a run tagged sweep=<name>,
// sweep_id=<id> and trial=<n>. (`sweep show` and `sweeps`: sweeps_commands.cpp.)
#include <torch/cuda.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "analysis/table_format.h"
#include "cli/command.h"
#include "cli/options.h"
#include "cli/plugin_options.h"
#include "cli/shipped_recipes.h"
#include "engine/recipe/usable_cores.h"
#include "orchestrate/error.h"
#include "orchestrate/shell_word.h"
#include "sweep/local_executor.h"
#include "sweep/slurm_executor.h"
#include "sweep/sweep_controller.h"
#include "sweep/sweep_ranking.h"
#include "sweep/sweep_run.h"

namespace orchestrate::cli {

namespace fs = std::filesystem;

namespace {

// The base recipe: relative to the spec's folder, else a shipped recipe's name.
std::string base_recipe(const sweep::SweepSpec& spec) {
  const fs::path beside = fs::path(spec.path).parent_path() / spec.recipe;
  if (fs::is_regular_file(beside)) return beside.lexically_normal().string();
  return recipe_file_or_shipped(spec.recipe);
}

// This executable (the engine), which runs each trial.
std::string this_engine() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error) throw Error("sweep: cannot find this program's file (/proc/self/exe): " + error.message());
  return self.string();
}

std::vector<sweep::Trial> trials_of(const std::vector<SweepTrialRecord>& records) {
  std::vector<sweep::Trial> out;
  for (const auto& record : records) out.push_back({record.trial, record.overrides});
  return out;
}

std::vector<SweepTrialRecord> records_of(const std::vector<sweep::Trial>& trials) {
  std::vector<SweepTrialRecord> out;
  for (const auto& trial : trials) {
    SweepTrialRecord record;
    record.trial = trial.index;
    record.overrides = trial.overrides;
    out.push_back(std::move(record));
  }
  return out;
}

// Stopped (Ctrl-C): the exit code of an interrupted run; else 1 when a trial failed.
std::unique_ptr<sweep::Executor> executor_for(const sweep::SweepSpec& spec, const sweep::SweepSetup& setup,
                                              int gpus) {
  if (spec.executor == sweep::ExecutorKind::local)
    return std::make_unique<sweep::LocalExecutor>(
        sweep::machine_slots(spec.concurrency, spec.threads * spec.nproc, spec.gpus, gpus));
  sweep::SlurmArrayShape shape;
  shape.name = spec.name;
  shape.work_dir = (fs::path(setup.output_dir) / "slurm").string();
  shape.concurrency = spec.concurrency;
  shape.cpus_per_task = spec.threads * spec.nproc;
  shape.gpus_per_task = spec.gpus;
  shape.settings = spec.slurm;
  return std::make_unique<sweep::SlurmExecutor>(shape);
}

int exit_code_of(const std::vector<SweepTrialRecord>& trials, bool stopped) {
  if (stopped) return static_cast<int>(ExitCode::interrupted);
  for (const auto& trial : trials)
    if (trial.state == "failed") return 1;
  return 0;
}

}  // namespace

int sweep_command(const std::vector<std::string>& arguments) {
  po::options_description options("sweep options");
  options.add_options()("spec", po::value<std::string>(),
                        "the sweep spec, a TOML file with a [sweep] table (share/doc/sweeps.md)")(
      "dry-run", po::bool_switch(), "check the spec and every trial's recipe, list the trials; run nothing")(
      "resume", po::value<std::string>(),
      "take up a stopped or lost sweep (its id or name): finished trials stay, interrupted ones continue from "
      "their checkpoints, the rest run")(
      "format", po::value<std::string>()->default_value("table"), "the ranking: table, csv, json or markdown");
  add_plugin_path_option(options);
  add_db_option(options);
  po::positional_options_description positional;
  positional.add("spec", 1);
  po::variables_map values;
  if (!parse_options("sweep", "SPEC [--dry-run] | --resume SWEEP | show SWEEP  [options]", options, positional,
                     arguments, values))
    return 0;
  const TableFormat format = parse_table_format(values["format"].as<std::string>());
  const bool resuming = values.count("resume") > 0;
  if (resuming == (values.count("spec") > 0))
    throw UsageError(resuming ? "sweep: give a spec file or --resume SWEEP, not both"
                              : "sweep: give a spec file (orchestrate sweep SPEC), or take up a sweep with "
                                "--resume SWEEP (orchestrate sweeps lists them)");
  const int gpus = static_cast<int>(torch::cuda::device_count());
  const std::string db = db_path(values);

  std::optional<RunStore> store;
  std::optional<SweepDetails> taken_up;
  sweep::SweepSpec spec;
  std::string recipe;
  std::vector<SweepTrialRecord> records;
  if (resuming) {
    if (!fs::exists(db)) throw UsageError("sweep --resume: no run store " + db + " (give its --db)");
    store.emplace(db);
    taken_up = store->find_sweep(values["resume"].as<std::string>());
    if (!taken_up)
      throw UsageError("sweep --resume: no sweep '" + values["resume"].as<std::string>() + "' in " + db +
                       " (orchestrate sweeps --db " + db + " lists them)");
    if (taken_up->sweep.state == "running" || taken_up->sweep.state == "finished")
      throw UsageError("sweep --resume: sweep " + std::to_string(taken_up->sweep.id) + " is " +
                       taken_up->sweep.state + (taken_up->sweep.state == "running"
                                                    ? " (process " + std::to_string(taken_up->sweep.pid) + " on " +
                                                          taken_up->sweep.host + " controls it)"
                                                    : "; nothing is left to run"));
    // The spec as it was when the sweep began: the same trials, metric and scheduler.
    spec = sweep::parse_sweep_spec(taken_up->sweep.spec, taken_up->sweep.spec_path, usable_cores(), gpus);
    recipe = taken_up->sweep.recipe_path;
    records = taken_up->trials;
  } else {
    spec = sweep::read_sweep_spec(sweep_spec_file_or_shipped(values["spec"].as<std::string>()), usable_cores(), gpus);
    recipe = base_recipe(spec);
    records = records_of(sweep::sample_trials(spec));
  }
  Registry registry;  // declared first: outlives every object its plugins create
  load_all_plugins(registry, values);
  sweep::check_trials(spec, trials_of(records), recipe, registry);
  if (values["dry-run"].as<bool>()) {
    std::cerr << "sweep " << spec.name << ": " << records.size() << " trials of " << recipe << " checked, "
              << spec.concurrency << " at a time with " << spec.threads << " thread(s) each\n";
    std::cout << render(sweep::ranking_table(records, spec.mode), format);
    return 0;
  }
  if (!store) store.emplace(db);
  sweep::SweepSetup setup;
  setup.recipe_path = recipe;
  setup.engine = this_engine();
  setup.db = store->path();
  if (const auto& path = values["plugin-path"].as<std::string>(); !path.empty())
    setup.run_arguments = {"--plugin-path", path};
  if (taken_up) {
    setup.sweep_id = taken_up->sweep.id;
    store->take_up_sweep(setup.sweep_id, command_line_of("sweep", arguments));
  } else {
    SweepRecord record;
    record.name = spec.name;
    record.spec_path = spec.path;
    record.spec = spec.text;
    record.recipe_path = recipe;
    record.metric = spec.metric;
    record.mode = sweep::mode_name(spec.mode);
    record.scheduler = sweep::scheduler_name(spec.early_stopping.scheduler);
    record.command_line = command_line_of("sweep", arguments);
    setup.sweep_id = store->begin_sweep(record, records);
    for (auto& trial : records) trial.sweep_id = setup.sweep_id;
  }
  // Absolute: a Slurm task runs elsewhere, from another directory.
  setup.output_dir = fs::absolute(fs::path(setup.db).parent_path() / "sweeps" /
                                  (spec.name + "-" + std::to_string(setup.sweep_id)))
                         .lexically_normal()
                         .string();
  std::cerr << "sweep " << setup.sweep_id << " '" << spec.name << "'" << (taken_up ? " taken up" : "") << ": "
            << records.size() << " trials of " << recipe << "; logs in " << setup.output_dir << "\n";
  std::vector<SweepTrialRecord> ended;
  std::unique_ptr<sweep::Executor> executor;  // outlives the controller that drives it
  std::optional<sweep::SweepController> controller;
  try {
    executor = executor_for(spec, setup, gpus);
    controller.emplace(spec, records, setup, *store, *executor);
    if (taken_up) controller->take_up();
    ended = controller->run();
  } catch (...) {
    store->end_sweep(setup.sweep_id, "failed");
    throw;
  }
  store->end_sweep(setup.sweep_id, controller->stopped() ? "stopped" : "finished");
  std::cerr << "ranked by " << spec.metric << " (" << sweep::mode_name(spec.mode) << "); again: orchestrate sweep show "
            << setup.sweep_id << " --db " << shell_word(setup.db)
            << (controller->stopped() ? "; continue it: orchestrate sweep --resume " + std::to_string(setup.sweep_id) +
                                           " --db " + shell_word(setup.db)
                                     : "")
            << "\n";
  std::cout << render(sweep::ranking_table(ended, spec.mode), format);
  return exit_code_of(ended, controller->stopped());
}

}  // namespace orchestrate::cli
