#include "cli/command.h"

#include <torch/version.h>  // header only: the front end prints it without linking LibTorch

#include <algorithm>
#include <cctype>
#include <ostream>

#include "cli/export_tensorboard_command.h"
#include "orchestrate/api.h"
#include "orchestrate/closest_match.h"
#include "orchestrate/error.h"

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
      {"sweep",
       "search a recipe's keys: a sweep spec's trials, checked, run side by side, stopped early and ranked: "
       "orchestrate sweep SPEC [--dry-run] | --resume SWEEP | show SWEEP",
       engine,
       sweep_command,
       {{"show", "a sweep's trials ranked by its metric, from the store: orchestrate sweep show SWEEP [--format F]",
         front_end, sweep_show_command}},
       "action",
       /*runs_without_subcommand=*/true},
      {"sweeps", "list recorded sweeps: orchestrate sweeps [--format F]", front_end, sweeps_command},
      {"bench-input",
       "time the recipe's input pipeline alone (first batch, images/s): orchestrate bench-input RECIPE [--batches N]",
       engine, bench_input_command},
      {"plugins", "list loaded plugins and their components", engine, plugins_command},
      {"env",
       "what this machine gives a run: versions, GPUs, CPU, and the GPU features a run would use here: "
       "orchestrate env [--format F]",
       engine, env_command},
      {"describe", "show a component's parameters: orchestrate describe KIND [NAME]", engine, describe_command},
      {"recipes", "list the shipped recipes with what each reproduces: orchestrate recipes [--paths]", front_end,
       recipes_command},
      {"runs", "list recorded runs: orchestrate runs [--name GLOB] [--tag k=v] [--sort METRIC] [--format F]",
       front_end, runs_command},
      {"show", "everything recorded about a run: orchestrate show RUN", front_end, show_command},
      {"compare", "runs side by side, only what differs: orchestrate compare RUN RUN [RUN]...", front_end,
       compare_command},
      {"report",
       "reports over recorded runs: orchestrate report throughput [RUN]... | regressions [--name GLOB]",
       front_end,
       nullptr,
       {{"throughput",
         "images/s, step time, data wait, MFU and the verdict of what limits each run: orchestrate report "
         "throughput [RUN...|--last N|--name GLOB] [--baseline RUN] [--per-rank]",
         front_end, report_throughput_command},
        {"regressions",
         "runs of one recipe on one machine that got slower than the earlier ones (exit 4): orchestrate report "
         "regressions [--name GLOB] [--threshold PERCENT]",
         front_end, report_regressions_command}},
       "report"},
      {"store",
       "the run store file itself: orchestrate store import FILE... | upgrade",
       front_end,
       nullptr,
       {{"import",
         "copy another store file's runs into this store; again: updates them, never duplicates: orchestrate store "
         "import FILE... [--db STORE]",
         front_end, store_import_command},
        {"upgrade",
         "bring a store written by an older orchestrate to this one's schema, which queries need: orchestrate store "
         "upgrade [--db STORE]",
         front_end, store_upgrade_command}},
       "action"},
      {"plot", "runs' curves as a picture: orchestrate plot RUN... --metric M[,M...] -o FILE.svg|png [--scaling]",
       front_end, plot_command},
      {"checkpoints", "list a run's checkpoints: orchestrate checkpoints RUN", engine, checkpoints_command},
      {"weights",
       "model weights: orchestrate weights export RUN|CHECKPOINT FILE.safetensors | list PATH",
       engine,
       nullptr,
       {{"export",
         "write a run's or checkpoint's weights as one .safetensors file: orchestrate weights export "
         "RUN|CHECKPOINT FILE.safetensors",
         engine, weights_export_command},
        {"list", "the tensors of weights, with shapes and dtypes: orchestrate weights list RUN|CHECKPOINT|FILE",
         engine, weights_list_command}},
       "action"},
      {"export",
       "a model for serving, or runs for TensorBoard or MLflow: orchestrate export serving RUN|CHECKPOINT -o DIR | "
       "tensorboard RUN... DIR | mlflow RUN... DIR",
       engine,
       nullptr,
       {{"serving",
         "a Triton model repository (TorchScript, config.pbtxt): orchestrate export serving RUN|CHECKPOINT -o DIR, "
         "or RECIPE --checkpoint RUN|DIR|FILE.safetensors -o DIR",
         engine, export_serving_command},
        {"onnx",
         "an ONNX file, checked against onnxruntime: orchestrate export onnx RUN|CHECKPOINT -o FILE.onnx, or "
         "RECIPE --checkpoint ...",
         engine, export_onnx_command},
        // These read only the store: the front end runs them.
        {"tensorboard", "runs as TensorBoard event files: orchestrate export tensorboard [RUN...|--last N] DIR",
         front_end, export_tensorboard_command},
        {"mlflow", "runs as an MLflow file store: orchestrate export mlflow [RUN...|--last N] DIR [--experiment NAME]",
         front_end, export_mlflow_command}},
       "target"},
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

const Command::Subcommand* Command::subcommand(const std::string& name) const {
  for (const auto& entry : subcommands)
    if (name == entry.name) return &entry;
  return nullptr;
}

namespace {

// "throughput or regressions", "serving, onnx, tensorboard or mlflow".
std::string alternatives(const Command& command, const char* last_separator) {
  std::string out;
  for (std::size_t i = 0; i < command.subcommands.size(); ++i) {
    if (i > 0) out += i + 1 == command.subcommands.size() ? last_separator : ", ";
    out += command.subcommands[i].name;
  }
  return out;
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

std::optional<CommandTarget> command_target(const Command& command, const std::vector<std::string>& arguments) {
  if (command.subcommands.empty()) return CommandTarget{command.name, command.runs_in, command.run, arguments};
  const std::string name = command.name;
  const std::string noun = command.subcommand_noun;
  if (arguments.empty() && command.runs_without_subcommand)
    return CommandTarget{command.name, command.runs_in, command.run, arguments};
  if (arguments.empty())
    throw UsageError(name + ": missing " + upper(noun) + ", which " + noun + ": " + alternatives(command, " or ") +
                     " (see orchestrate " + name + " --help)");
  const std::string& first = arguments.front();
  const Command::Subcommand* subcommand = command.subcommand(first);
  if (!subcommand && command.runs_without_subcommand)
    return CommandTarget{command.name, command.runs_in, command.run, arguments};
  if (first == "--help" || first == "-h") return std::nullopt;
  if (subcommand == nullptr) {
    std::vector<std::string> names;
    for (const auto& entry : command.subcommands) names.emplace_back(entry.name);
    const std::string nearest = closest_match(first, names);
    throw UsageError(name + ": unknown " + noun + " '" + first + "' (known: " + alternatives(command, ", ") + ")" +
                     (nearest.empty() ? "" : "; did you mean '" + nearest + "'?"));
  }
  return CommandTarget{subcommand->name, subcommand->runs_in, subcommand->run, {arguments.begin() + 1, arguments.end()}};
}

void print_command_usage(const Command& command, std::ostream& out) {
  const std::string noun = command.subcommand_noun;
  out << "usage: orchestrate " << command.name << " <" << noun << "> [options]\n\n" << noun << "s:\n";
  std::size_t width = 0;
  for (const auto& entry : command.subcommands) width = std::max(width, std::string(entry.name).size());
  for (const auto& entry : command.subcommands)
    out << "  " << entry.name << std::string(width + 2 - std::string(entry.name).size(), ' ') << entry.summary << "\n";
  out << "\n`orchestrate " << command.name << " <" << noun << "> --help` shows its options.\n";
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
