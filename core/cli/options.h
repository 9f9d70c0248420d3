// Option parsing shared by the subcommands (Boost.Program_options).
#pragma once

#include <boost/program_options.hpp>

#include <string>
#include <vector>

#include "store/run_store.h"

namespace orchestrate::cli {

namespace po = boost::program_options;

// Parses `arguments` into `values`; a bad option is a UsageError naming the
// command. Returns false when --help was given (help has then been printed).
bool parse_options(const std::string& command, const std::string& usage, const po::options_description& options,
                   const po::positional_options_description& positional, const std::vector<std::string>& arguments,
                   po::variables_map& values);

// `arguments` without option `name` and its value, however it was written
// (--name V, --name=V, an unambiguous prefix of the name): what a command
// passes on when it runs itself again. `arguments` must have parsed.
std::vector<std::string> arguments_without(const std::vector<std::string>& arguments,
                                           const po::options_description& options,
                                           const po::positional_options_description& positional,
                                           const std::string& name);

// `orchestrate COMMAND ARGUMENTS` as a shell would take it back (each
// argument through shell_word): the command line a run or a sweep records.
std::string command_line_of(const std::string& command, const std::vector<std::string>& arguments);

// --format text|json of the commands that act (run, eval, bench-input): text
// for people, or one JSON object printed last on stdout
// (share/doc/schemas/COMMAND.schema.json). A UsageError for anything else.
void add_outcome_format_option(po::options_description& options, const std::string& command);
bool wants_json(const po::variables_map& values);

// --db: added to the commands that need it.
void add_db_option(po::options_description& options);

// The run store file (RunStore::resolve_path): --db, else $ORCHESTRATE_DB,
// else `recipe_db` (a recipe's [log] db), else ./orchestrate.db.
std::string db_path(const po::variables_map& values, const std::string& recipe_db = "");

// The run store of --db for a query: never created (a missing file is almost
// always a wrong path: a UsageError). Read-only unless a command must add to
// what an existing run recorded (an export event): then migrated as any writer does.
RunStore open_existing_store(const po::variables_map& values, StoreAccess access = StoreAccess::read_only);

// The run `id` (an id or a name) in `store`; a UsageError pointing at
// `orchestrate runs` when there is none.
RunSummary find_run_or_throw(const RunStore& store, const std::string& id);


}  // namespace orchestrate::cli
