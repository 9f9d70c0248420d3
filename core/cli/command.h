// The CLI is a table of subcommands; each parses its own options up front.
#pragma once

#include <string>
#include <vector>

namespace orchestrate::cli {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& arguments);  // arguments after the command name
};

const std::vector<Command>& commands();

int run_command(const std::vector<std::string>& arguments);
int rerun_command(const std::vector<std::string>& arguments);
int eval_command(const std::vector<std::string>& arguments);
int plugins_command(const std::vector<std::string>& arguments);
int describe_command(const std::vector<std::string>& arguments);
int runs_command(const std::vector<std::string>& arguments);
int report_command(const std::vector<std::string>& arguments);
int show_command(const std::vector<std::string>& arguments);
int compare_command(const std::vector<std::string>& arguments);
int plot_command(const std::vector<std::string>& arguments);
int checkpoints_command(const std::vector<std::string>& arguments);
int weights_command(const std::vector<std::string>& arguments);
int export_command(const std::vector<std::string>& arguments);
int predict_command(const std::vector<std::string>& arguments);
int new_plugin_command(const std::vector<std::string>& arguments);

}  // namespace orchestrate::cli
