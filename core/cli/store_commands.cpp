// `orchestrate store import FILE`: another run store's runs brought into this
// one (RunStore::import_runs), idempotently: what a sweep does with the
// store each Slurm trial writes, and what a user does with a store file
// from another machine. `orchestrate store upgrade`: a store file written by
// an older orchestrate brought to this one's schema, which the queries
// (runs, show, ...) need and never do themselves: they never write.
#include <SQLiteCpp/Database.h>

#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "cli/options.h"
#include "orchestrate/error.h"
#include "store/run_store.h"
#include "store/run_store_schema.h"

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

int store_upgrade_command(const std::vector<std::string>& arguments) {
  po::options_description options("store upgrade options");
  add_db_option(options);
  po::variables_map values;
  if (!parse_options("store upgrade", "[--db STORE]", options, {}, arguments, values)) return 0;
  const std::string path = db_path(values);
  if (!std::filesystem::exists(path))
    throw UsageError(path + ": no run store here; give --db FILE or set $ORCHESTRATE_DB");
  int before = -1;
  try {
    before = SQLite::Database(path, SQLite::OPEN_READONLY).execAndGet("PRAGMA user_version").getInt();
  } catch (const SQLite::Exception&) {
    // not a database: opening it as a store below says so, with the file's name and what to do
  }
  const RunStore store(path);  // opening it for writing migrates it (run_store_schema.h)
  const int latest = latest_schema_version();
  if (before == latest)
    std::cout << path << ": run-store schema version " << latest << ", this orchestrate's already\n";
  else std::cout << path << ": run-store schema version " << before << " -> " << latest << "\n";
  return 0;
}

}  // namespace orchestrate::cli
