#include "command.h"

namespace orchestrate::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table{
      {"run",
       "train a recipe: orchestrate run RECIPE [--set table.key=value]... [--dry-run] [--resume [RUN|DIR]] "
       "[--nproc N]",
       run_command},
      {"rerun", "run a recorded run's resolved recipe again, linked to it: orchestrate rerun RUN [run options]",
       rerun_command},
      {"eval", "evaluate saved weights: orchestrate eval RECIPE --checkpoint DIR|RUN|FILE.safetensors",
       eval_command},
      {"plugins", "list loaded plugins and their components", plugins_command},
      {"describe", "show a component's parameters: orchestrate describe KIND NAME", describe_command},
      {"runs", "list recorded runs: orchestrate runs [--name GLOB] [--tag k=v] [--sort METRIC] [--format F]",
       runs_command},
      {"show", "everything recorded about a run: orchestrate show RUN", show_command},
      {"compare", "runs side by side, only what differs: orchestrate compare RUN RUN [RUN]...", compare_command},
      {"report", "reports over recorded runs: orchestrate report throughput [RUN]...", report_command},
      {"plot", "runs' curves as a picture: orchestrate plot RUN... --metric M[,M...] -o FILE.svg|png [--scaling]",
       plot_command},
      {"checkpoints", "list a run's checkpoints: orchestrate checkpoints RUN", checkpoints_command},
      {"weights", "model weights: orchestrate weights export RUN|CHECKPOINT FILE.safetensors | list PATH",
       weights_command},
      {"export",
       "a model for serving, or runs for TensorBoard: orchestrate export serving RUN|CHECKPOINT --out DIR | "
       "tensorboard RUN... DIR",
       export_command},
      {"predict", "label images with an exported model: orchestrate predict MODEL_DIR IMAGE...", predict_command},
      {"new-plugin", "write a plugin skeleton to build out of tree: orchestrate new-plugin KIND NAME DIR",
       new_plugin_command},
  };
  return table;
}

}  // namespace orchestrate::cli
