// `orchestrate rerun RUN [run options]`: the resolved recipe a run recorded,
// run again as a new run whose source is the old one (runs shows "rerun of N").
// The recipe is written beside the store (reruns/<name>-run<N>.toml), so the
// new run's recipe path is a file the user can read and run again.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "orchestrate/error.h"
#include "store/run_store.h"

namespace orchestrate::cli {

namespace {

std::string write_recipe_beside(const RunStore& store, const RunSummary& run) {
  namespace fs = std::filesystem;
  const fs::path directory = fs::path(store.path()).parent_path() / "reruns";
  const fs::path path = directory / (run.name + "-run" + std::to_string(run.id) + ".toml");
  std::error_code error;
  fs::create_directories(directory, error);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << store.resolved_recipe(run.id);
  out.close();
  if (error || !out)
    throw Error(path.string() + ": cannot write the recipe of run " + std::to_string(run.id) +
                (error ? " (" + error.message() + ")" : std::string()) + "; check that its directory is writable");
  return path.string();
}

}  // namespace

int rerun_command(const std::vector<std::string>& arguments) {
  po::options_description options("rerun options");
  add_db_option(options);
  if (arguments.empty())
    throw UsageError("rerun: which run? give its id or name (orchestrate runs lists them), e.g. orchestrate rerun 3");
  if (arguments.front() == "--help" || arguments.front() == "-h") {
    std::cout << "usage: orchestrate rerun RUN [run options: --set, --nproc, --tag, --quiet, --db ...]\n\n"
              << "Runs the resolved recipe RUN recorded as a new run, linked to it.\n"
              << options;
    return 0;
  }
  const std::string& id = arguments.front();
  if (id.rfind("-", 0) == 0) throw UsageError("rerun: the first argument is the run (id or name), not " + id);
  // Only RUN and --db are rerun's; every other argument goes to `run` as given
  // (its option values included, which a parser that does not know them
  // could not tell from positional arguments).
  std::vector<std::string> db_arguments, passed_on;
  for (std::size_t i = 1; i < arguments.size(); ++i) {
    if (arguments[i] == "--db" && i + 1 < arguments.size()) {
      db_arguments = {arguments[i], arguments[i + 1]};
      ++i;
    } else if (arguments[i].rfind("--db=", 0) == 0) {
      db_arguments = {arguments[i]};
    } else {
      passed_on.push_back(arguments[i]);
    }
  }
  po::variables_map values;
  po::store(po::command_line_parser(db_arguments).options(options).run(), values);
  po::notify(values);

  std::string recipe, source;
  {
    const RunStore store = open_existing_store(values);
    const RunSummary run = find_run_or_throw(store, id);
    recipe = write_recipe_beside(store, run);
    source = std::to_string(run.id);
  }
  std::vector<std::string> run_arguments{recipe, "--rerun-of", source, "--db", db_path(values)};
  run_arguments.insert(run_arguments.end(), passed_on.begin(), passed_on.end());
  return run_command(run_arguments);
}

}  // namespace orchestrate::cli
