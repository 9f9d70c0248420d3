#include "command.h"

#include <torch/version.h>  // header only: the front end prints it without linking LibTorch

#include <algorithm>
#include <ostream>

#include "export_tensorboard_command.h"
#include "orchestrate/api.h"

namespace orchestrate::cli {

const std::vector<Command>& commands() {
  constexpr auto front_end = Executable::front_end;
  constexpr auto engine = Executable::engine;
  static const std::vector<Command> table{
      {"run",
       "train a recipe (a file, or a shipped recipe's name): orchestrate run RECIPE [--set table.key=value]... "
       "[--dry-run] [--smoke] [--resume [RUN|DIR]] [--nproc N]",
       engine, run_command},
      {"rerun", "run a recorded run's resolved recipe again, linked to it: orchestrate rerun RUN [run options]", engine,
       rerun_command},
      {"eval", "evaluate saved weights: orchestrate eval RECIPE --checkpoint DIR|RUN|FILE.safetensors", engine,
       eval_command},
      {"bench-input",
       "time the recipe's input pipeline alone (first batch, images/s): orchestrate bench-input RECIPE [--batches N]",
       engine, bench_input_command},
      {"plugins", "list loaded plugins and their components", engine, plugins_command},
      {"describe", "show a component's parameters: orchestrate describe KIND NAME", engine, describe_command},
      {"recipes", "list the shipped recipes with what each reproduces: orchestrate recipes [--paths]", front_end,
       recipes_command},
      {"runs", "list recorded runs: orchestrate runs [--name GLOB] [--tag k=v] [--sort METRIC] [--format F]",
       front_end, runs_command},
      {"show", "everything recorded about a run: orchestrate show RUN", front_end, show_command},
      {"compare", "runs side by side, only what differs: orchestrate compare RUN RUN [RUN]...", front_end,
       compare_command},
      {"report", "reports over recorded runs: orchestrate report throughput [RUN]... | regressions [--name GLOB]", front_end,
       report_command},
      {"plot", "runs' curves as a picture: orchestrate plot RUN... --metric M[,M...] -o FILE.svg|png [--scaling]",
       front_end, plot_command},
      {"checkpoints", "list a run's checkpoints: orchestrate checkpoints RUN", engine, checkpoints_command},
      {"weights", "model weights: orchestrate weights export RUN|CHECKPOINT FILE.safetensors | list PATH", engine,
       weights_command},
      {"export",
       "a model for serving, or runs for TensorBoard or MLflow: orchestrate export serving RUN|CHECKPOINT -o DIR | "
       "tensorboard RUN... DIR | mlflow RUN... DIR",
       engine, export_command, {{"tensorboard", export_tensorboard_command}, {"mlflow", export_mlflow_command}}},
      {"predict", "label images with an exported model: orchestrate predict MODEL_DIR IMAGE...", engine,
       predict_command},
      {"new-plugin", "write a plugin skeleton to build out of tree: orchestrate new-plugin KIND NAME DIR", engine,
       new_plugin_command},
      {"conformance",
       "check plugins against their kind's contract: orchestrate conformance [KIND NAME] [--settings FILE.toml]",
       engine, conformance_command},
  };
  return table;
}

const Command* find_command(const std::string& name) {
  for (const auto& command : commands())
    if (name == command.name) return &command;
  return nullptr;
}

const Command::Subcommand* Command::front_end_subcommand(const std::string& first_argument) const {
  for (const auto& subcommand : front_end_subcommands)
    if (first_argument == subcommand.name) return &subcommand;
  return nullptr;
}

void print_usage(std::ostream& out) {
  out << "usage: orchestrate <command> [options]\n\ncommands:\n";
  // Names padded to the longest plus two spaces: help2man (the man page) and
  // people both read two spaces as the end of the name.
  std::size_t width = 0;
  for (const auto& command : commands()) width = std::max(width, std::string(command.name).size());
  for (const auto& command : commands())
    out << "  " << command.name << std::string(width + 2 - std::string(command.name).size(), ' ') << command.summary
        << "\n";
  out << "\n`orchestrate <command> --help` shows a command's options.\n"
         "exit codes: 0 ok, 1 runtime failure, 2 usage or recipe error, 3 plugin error, 4 regression found (report\n"
         "regressions), 130 interrupted\n";
}

void print_version(std::ostream& out) {
  out << "orchestrate " << version() << " (LibTorch " << TORCH_VERSION << ", plugin API " << kPluginApiVersion
      << ")\n";
}

}  // namespace orchestrate::cli
