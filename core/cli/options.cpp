#include "options.h"

#include <filesystem>
#include <iostream>

#include "orchestrate/error.h"
#include "run_store.h"

namespace orchestrate::cli {

bool parse_options(const std::string& command, const std::string& usage, const po::options_description& options,
                   const po::positional_options_description& positional, const std::vector<std::string>& arguments,
                   po::variables_map& values) {
  po::options_description all(options);
  all.add_options()("help,h", "show this help");
  try {
    po::store(po::command_line_parser(arguments).options(all).positional(positional).run(), values);
    if (values.count("help")) {
      std::cout << "usage: orchestrate " << command << " " << usage << "\n\n" << all << "\n";
      return false;
    }
    po::notify(values);
  } catch (const po::error& e) {
    throw UsageError(command + ": " + e.what() + " (see orchestrate " + command + " --help)");
  }
  return true;
}

std::vector<std::string> arguments_without(const std::vector<std::string>& arguments,
                                           const po::options_description& options,
                                           const po::positional_options_description& positional,
                                           const std::string& name) {
  // The parser's own reading of the tokens, so every spelling it accepts is
  // recognised the same way here.
  const auto parsed = po::command_line_parser(arguments).options(options).positional(positional).run();
  std::vector<std::string> kept;
  for (const auto& option : parsed.options)
    if (option.string_key != name)
      kept.insert(kept.end(), option.original_tokens.begin(), option.original_tokens.end());
  return kept;
}

void add_db_option(po::options_description& options) {
  options.add_options()("db", po::value<std::string>()->default_value(""),
                        "run store (SQLite file); default: [log] db, then $ORCHESTRATE_DB, then ./orchestrate.db");
}

std::string db_path(const po::variables_map& values, const std::string& recipe_db) {
  if (const auto& db = values["db"].as<std::string>(); !db.empty()) return db;
  if (!recipe_db.empty()) return recipe_db;
  return RunStore::default_path();
}

}  // namespace orchestrate::cli

namespace orchestrate::cli {

RunStore open_existing_store(const po::variables_map& values, StoreAccess access) {
  const std::string path = db_path(values);
  if (!std::filesystem::exists(path))
    throw UsageError(path + ": no run store here; give --db FILE or set $ORCHESTRATE_DB (runs are recorded by "
                            "orchestrate run)");
  return RunStore(path, access);
}

RunSummary find_run_or_throw(const RunStore& store, const std::string& id) {
  auto run = store.find_run(id);
  if (!run) throw UsageError("no run '" + id + "' in " + store.path() + "; `orchestrate runs` lists the runs");
  return *run;
}

}  // namespace orchestrate::cli
