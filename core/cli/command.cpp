#include "command.h"

#include <torch/version.h>  // header only: the front end prints it without linking LibTorch

#include <ostream>

#include "orchestrate/api.h"

namespace orchestrate::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table{
      {"run",
       "train a recipe (a file, or a shipped recipe's name): orchestrate run RECIPE [--set table.key=value]... "
       "[--dry-run] [--smoke] [--resume [RUN|DIR]] [--nproc N]"},
      {"rerun", "run a recorded run's resolved recipe again, linked to it: orchestrate rerun RUN [run options]"},
      {"eval", "evaluate saved weights: orchestrate eval RECIPE --checkpoint DIR|RUN|FILE.safetensors"},
      {"bench-input",
       "time the recipe's input pipeline alone (first batch, images/s): orchestrate bench-input RECIPE [--batches N]"},
      {"plugins", "list loaded plugins and their components"},
      {"describe", "show a component's parameters: orchestrate describe KIND NAME"},
      {"recipes", "list the shipped recipes with what each reproduces: orchestrate recipes [--paths]"},
      {"runs", "list recorded runs: orchestrate runs [--name GLOB] [--tag k=v] [--sort METRIC] [--format F]"},
      {"show", "everything recorded about a run: orchestrate show RUN"},
      {"compare", "runs side by side, only what differs: orchestrate compare RUN RUN [RUN]..."},
      {"report", "reports over recorded runs: orchestrate report throughput [RUN]..."},
      {"plot", "runs' curves as a picture: orchestrate plot RUN... --metric M[,M...] -o FILE.svg|png [--scaling]"},
      {"checkpoints", "list a run's checkpoints: orchestrate checkpoints RUN"},
      {"weights", "model weights: orchestrate weights export RUN|CHECKPOINT FILE.safetensors | list PATH"},
      {"export",
       "a model for serving, or runs for TensorBoard: orchestrate export serving RUN|CHECKPOINT --out DIR | "
       "tensorboard RUN... DIR"},
      {"predict", "label images with an exported model: orchestrate predict MODEL_DIR IMAGE..."},
      {"new-plugin", "write a plugin skeleton to build out of tree: orchestrate new-plugin KIND NAME DIR"},
  };
  return table;
}

const Command* find_command(const std::string& name) {
  for (const auto& command : commands())
    if (name == command.name) return &command;
  return nullptr;
}

void print_usage(std::ostream& out) {
  out << "usage: orchestrate <command> [options]\n\ncommands:\n";
  for (const auto& command : commands())
    out << "  " << command.name << std::string(12 - std::string(command.name).size(), ' ') << command.summary << "\n";
  out << "\n`orchestrate <command> --help` shows a command's options.\n"
         "exit codes: 0 ok, 1 runtime failure, 2 usage or recipe error, 3 plugin error, 130 interrupted\n";
}

void print_version(std::ostream& out) {
  out << "orchestrate " << version() << " (LibTorch " << TORCH_VERSION << ", plugin API " << kPluginApiVersion
      << ")\n";
}

}  // namespace orchestrate::cli
