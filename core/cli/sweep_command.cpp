// `orchestrate sweep SPEC [--dry-run] [--format F]`: a sweep spec's trials
// (core/sweep), every one checked before any starts, run side by side on
// this machine's cores or GPUs, and ranked by the spec's metric. Each trial
// is a run in the store tagged sweep=<name> and trial=<n>.
#include <torch/cuda.h>

#include <filesystem>
#include <iostream>

#include "analysis/table_format.h"
#include "cli/command.h"
#include "cli/options.h"
#include "cli/plugin_options.h"
#include "cli/shipped_recipes.h"
#include "engine/recipe/usable_cores.h"
#include "orchestrate/error.h"
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

}  // namespace

int sweep_command(const std::vector<std::string>& arguments) {
  po::options_description options("sweep options");
  options.add_options()("spec", po::value<std::string>()->required(),
                        "the sweep spec, a TOML file with a [sweep] table (share/doc/sweeps.md)")(
      "dry-run", po::bool_switch(), "check the spec and every trial's recipe, list the trials; run nothing")(
      "format", po::value<std::string>()->default_value("table"), "the ranking: table, csv, json or markdown");
  add_plugin_path_option(options);
  add_db_option(options);
  po::positional_options_description positional;
  positional.add("spec", 1);
  po::variables_map values;
  if (!parse_options("sweep", "SPEC [--dry-run] [options]", options, positional, arguments, values)) return 0;
  const TableFormat format = parse_table_format(values["format"].as<std::string>());

  const int gpus = static_cast<int>(torch::cuda::device_count());
  const sweep::SweepSpec spec = sweep::read_sweep_spec(values["spec"].as<std::string>(), usable_cores(), gpus);
  if (spec.early_stopping.scheduler != sweep::Scheduler::none)
    throw RecipeError(spec.path + ": [sweep.early_stopping] is not run by this version of orchestrate (ASHA and "
                      "the median rule come next, share/doc/sweeps.md); remove the table to run every trial to its end");
  const std::string recipe = base_recipe(spec);
  const std::vector<sweep::Trial> trials = sweep::sample_trials(spec);
  Registry registry;  // declared first: outlives every object its plugins create
  load_all_plugins(registry, values);
  sweep::check_trials(spec, trials, recipe, registry);
  if (values["dry-run"].as<bool>()) {
    std::vector<sweep::TrialOutcome> planned;
    for (const auto& trial : trials) planned.push_back({trial});
    std::cerr << "sweep " << spec.name << ": " << trials.size() << " trials of " << recipe << " checked, "
              << spec.concurrency << " at a time with " << spec.threads << " thread(s) each\n";
    std::cout << render(sweep::ranking_table(spec, planned), format);
    return 0;
  }
  sweep::SweepSetup setup;
  setup.recipe_path = recipe;
  setup.engine = this_engine();
  setup.db = db_path(values);
  if (const auto& path = values["plugin-path"].as<std::string>(); !path.empty())
    setup.run_arguments = {"--plugin-path", path};
  setup.output_dir = (fs::path(setup.db).parent_path() / "sweeps" / spec.name).string();
  const auto slots = sweep::machine_slots(spec.concurrency, spec.threads * spec.nproc, spec.gpus, gpus);
  const auto outcomes = sweep::run_trials(spec, trials, setup, slots);
  std::cerr << "ranked by " << spec.metric << " (" << (spec.mode == sweep::Mode::max ? "max" : "min")
            << "); the trials: orchestrate runs --tag sweep=" << spec.name << " --db " << setup.db << "\n";
  std::cout << render(sweep::ranking_table(spec, outcomes), format);
  // Stopped (Ctrl-C): the exit code of an interrupted run; else 1 when a trial failed.
  int exit_code = 0;
  for (const auto& outcome : outcomes) {
    if (outcome.status == "interrupted" || outcome.status == "pending") return 130;
    if (outcome.status == "failed") exit_code = 1;
  }
  return exit_code;
}

}  // namespace orchestrate::cli
