// The CLI is a table of subcommands; each parses its own options up front.
// Two executables share the table: the front end (`orchestrate`, free of
// LibTorch) runs the queries over the run store, and hands every other
// command to the engine (`orchestrate-engine`), which runs them all.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace orchestrate::cli {

// What runs a command: its arguments are those after the command name.
using CommandFunction = int (*)(const std::vector<std::string>& arguments);

struct Command {
  const char* name;
  const char* summary;
};

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
int report_command(const std::vector<std::string>& arguments);
int show_command(const std::vector<std::string>& arguments);
int compare_command(const std::vector<std::string>& arguments);
int plot_command(const std::vector<std::string>& arguments);
int recipes_command(const std::vector<std::string>& arguments);

// The engine's commands.
int run_command(const std::vector<std::string>& arguments);
int rerun_command(const std::vector<std::string>& arguments);
int eval_command(const std::vector<std::string>& arguments);
int bench_input_command(const std::vector<std::string>& arguments);
int plugins_command(const std::vector<std::string>& arguments);
int describe_command(const std::vector<std::string>& arguments);
int checkpoints_command(const std::vector<std::string>& arguments);
int weights_command(const std::vector<std::string>& arguments);
int export_command(const std::vector<std::string>& arguments);  // serving and tensorboard
int predict_command(const std::vector<std::string>& arguments);
int new_plugin_command(const std::vector<std::string>& arguments);

}  // namespace orchestrate::cli
