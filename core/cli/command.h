// The CLI is one table of subcommands (command.cpp); each parses its own
// options up front. Help, dispatch and the split between the two executables
// all come from the table, so adding a command is one entry there. The front
// end (`orchestrate`, free of LibTorch) runs the queries over the run store,
// and hands every other command to the engine (`orchestrate-engine`), which
// runs them all.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace orchestrate::cli {

// What runs a command: its arguments are those after the command name.
using CommandFunction = int (*)(const std::vector<std::string>& arguments);

// Which executable runs a command: the front end execs the engine for the
// engine's commands, the engine runs both kinds.
enum class Executable { front_end, engine };

struct Command {
  const char* name;
  const char* summary;  // with its usage, for `orchestrate --help`
  Executable runs_in;
  // What runs it; null for a command made of subcommands. An engine
  // command's function is linked into the engine only: in the front end it
  // is null (see the weak declarations below).
  CommandFunction run;
  // A command made of subcommands (`report throughput`, `export onnx`): the
  // first argument names one, which parses its own options and runs where
  // its entry says (`export tensorboard` reads only the store, so the front
  // end runs it; `export serving` needs LibTorch).
  struct Subcommand {
    const char* name;
    const char* summary;  // what it does and its usage, for `orchestrate COMMAND --help`
    Executable runs_in;
    CommandFunction run;
  };
  std::vector<Subcommand> subcommands = {};
  // What the first argument is called in the command's messages: "report"
  // ("unknown report 'x'"), "target", "action".
  const char* subcommand_noun = "subcommand";
  // Both: `run` takes a first argument that names no subcommand (`sweep
  // SPEC`, beside `sweep show ID`), and --help, which it answers with its
  // options.
  bool runs_without_subcommand = false;

  // The subcommand named `name`, or nullptr.
  const Subcommand* subcommand(const std::string& name) const;
};

// What runs one command line: the command, or the subcommand its first
// argument names, with the arguments after either's name.
struct CommandTarget {
  const char* name;  // "report throughput"
  Executable runs_in;
  CommandFunction run;
  std::vector<std::string> arguments;
};

// The target of `command` run with `arguments` (those after its name). For
// a command made of subcommands: a missing or unknown one is a UsageError
// naming the known ones; nullopt when the arguments ask for the command's
// help (`--help`, `-h`), which print_command_usage prints.
std::optional<CommandTarget> command_target(const Command& command, const std::vector<std::string>& arguments);

// `orchestrate COMMAND --help` for a command made of subcommands: its usage
// and each subcommand's summary.
void print_command_usage(const Command& command, std::ostream& out);

// Every command, in the order `orchestrate --help` lists them.
const std::vector<Command>& commands();

// The command named `name`, or nullptr.
const Command* find_command(const std::string& name);

// `orchestrate --help`: the command table and the exit codes.
void print_usage(std::ostream& out);

// `orchestrate --version`: orchestrate's, LibTorch's (from its headers) and the plugin API's.
void print_version(std::ostream& out);

// The front end's commands (torch-free).
int runs_command(const std::vector<std::string>& arguments);
int report_throughput_command(const std::vector<std::string>& arguments);
int report_regressions_command(const std::vector<std::string>& arguments);
int show_command(const std::vector<std::string>& arguments);
int compare_command(const std::vector<std::string>& arguments);
int plot_command(const std::vector<std::string>& arguments);
int recipes_command(const std::vector<std::string>& arguments);
int sweeps_command(const std::vector<std::string>& arguments);
int sweep_show_command(const std::vector<std::string>& arguments);
int store_import_command(const std::vector<std::string>& arguments);
int store_upgrade_command(const std::vector<std::string>& arguments);

// The engine's commands. Declared weak so that the one table can name them
// in the front end too, which does not link LibTorch: there they are null.
#define ORCHESTRATE_ENGINE_COMMAND [[gnu::weak]]
ORCHESTRATE_ENGINE_COMMAND int run_command(const std::vector<std::string>& arguments);
ORCHESTRATE_ENGINE_COMMAND int rerun_command(const std::vector<std::string>& arguments);
ORCHESTRATE_ENGINE_COMMAND int eval_command(const std::vector<std::string>& arguments);
ORCHESTRATE_ENGINE_COMMAND int bench_input_command(const std::vector<std::string>& arguments);
ORCHESTRATE_ENGINE_COMMAND int sweep_command(const std::vector<std::string>& arguments);
ORCHESTRATE_ENGINE_COMMAND int plugins_command(const std::vector<std::string>& arguments);
ORCHESTRATE_ENGINE_COMMAND int env_command(const std::vector<std::string>& arguments);
ORCHESTRATE_ENGINE_COMMAND int describe_command(const std::vector<std::string>& arguments);
ORCHESTRATE_ENGINE_COMMAND int checkpoints_command(const std::vector<std::string>& arguments);
ORCHESTRATE_ENGINE_COMMAND int weights_export_command(const std::vector<std::string>& arguments);
ORCHESTRATE_ENGINE_COMMAND int weights_list_command(const std::vector<std::string>& arguments);
ORCHESTRATE_ENGINE_COMMAND int export_serving_command(const std::vector<std::string>& arguments);
ORCHESTRATE_ENGINE_COMMAND int export_onnx_command(const std::vector<std::string>& arguments);
ORCHESTRATE_ENGINE_COMMAND int predict_command(const std::vector<std::string>& arguments);
ORCHESTRATE_ENGINE_COMMAND int new_plugin_command(const std::vector<std::string>& arguments);
ORCHESTRATE_ENGINE_COMMAND int conformance_command(const std::vector<std::string>& arguments);
#undef ORCHESTRATE_ENGINE_COMMAND

}  // namespace orchestrate::cli
