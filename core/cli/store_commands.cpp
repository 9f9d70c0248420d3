// `orchestrate store import FILE`: another run store's runs brought into this
// one (RunStore::import_runs), idempotently: what a sweep does with the
// store each Slurm trial writes, and what a user does with a store file
// from another machine.
#include <iostream>

#include "cli/command.h"
#include "cli/options.h"
#include "store/run_store.h"

namespace orchestrate::cli {

int store_import_command(const std::vector<std::string>& arguments) {
  po::options_description options("store import options");
  add_db_option(options);
  options.add_options()("file", po::value<std::vector<std::string>>()->required(),
                        "the run store files to import (each imported again updates its runs, never duplicates them)");
  po::positional_options_description positional;
  positional.add("file", -1);
  po::variables_map values;
  if (!parse_options("store import", "FILE... [--db STORE]", options, positional, arguments, values)) return 0;
  RunStore store(db_path(values));
  for (const std::string& file : values["file"].as<std::vector<std::string>>()) {
    const auto ids = store.import_runs(file);
    std::cout << "imported " << ids.size() << " run" << (ids.size() == 1 ? "" : "s") << " of " << file << " into "
              << store.path() << (ids.empty() ? "" : ":") << "\n";
    for (const auto& [there, here] : ids) std::cout << "  run " << there << " there is run " << here << " here\n";
  }
  return 0;
}

}  // namespace orchestrate::cli
