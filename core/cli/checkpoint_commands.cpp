// `orchestrate checkpoints` and `orchestrate weights`: what a run saved, and
// its weights as a safetensors file for other tools.
#include <c10/core/ScalarType.h>
#include "store/run_store.h"

#include <filesystem>
#include <iostream>

#include "analysis/table_format.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/durable_file.h"
#include "checkpoint/safetensors.h"
#include "cli/checkpoint_argument.h"
#include "cli/command.h"
#include "cli/options.h"
#include "engine/setup/weight_transfer.h"
#include "orchestrate/error.h"

namespace orchestrate::cli {

namespace fs = std::filesystem;

namespace {

Cell metric_cell(const std::map<std::string, double>& metrics, const std::string& name) {
  const auto it = metrics.find(name);
  return it == metrics.end() ? Cell() : number_cell(it->second, 4);
}

int export_weights(const std::string& source, const std::string& target, const po::variables_map& values) {
  if (fs::path(target).extension() != ".safetensors")
    throw UsageError("weights export: " + target + " must end in .safetensors");
  const std::string checkpoint = checkpoint_of(source, values);
  NamedTensors weights = read_safetensors(weights_file_of(checkpoint, "weights export:"));
  if (is_checkpoint(checkpoint)) {
    const CheckpointMeta meta = read_checkpoint_meta(checkpoint);
    weights.metadata["orchestrate.model"] = meta.model;
    weights.metadata["orchestrate.run_id"] = std::to_string(meta.run_id);
    weights.metadata["orchestrate.step"] = std::to_string(meta.step);
  }
  // Written beside the target and renamed over it: a reader never sees half a file.
  const std::string staged = target + ".partial";
  write_safetensors(staged, weights);
  fs::rename(staged, target);
  const fs::path parent = fs::path(target).parent_path();
  sync_directory(parent.empty() ? "." : parent.string());
  std::cout << "wrote " << weights.tensors.size() << " tensors of " << checkpoint << " to " << target << "\n";
  return 0;
}

int list_weights(const std::string& source, const po::variables_map& values) {
  const std::string checkpoint = checkpoint_of(source, values);
  Table table{{"name", "dtype", "shape", "elements"}, {}};
  std::int64_t total = 0;
  for (const auto& info : read_safetensors_header(weights_file_of(checkpoint, "weights list:"))) {
    std::int64_t elements = 1;
    std::string shape;
    for (std::size_t i = 0; i < info.shape.size(); ++i) {
      elements *= info.shape[i];
      shape += (i ? ", " : "") + std::to_string(info.shape[i]);
    }
    total += elements;
    // The shape is an array of integers in JSON; "[64, 3, 7, 7]" for people and CSV.
    table.rows.push_back({text_cell(info.name), text_cell(c10::toString(info.dtype)),
                          json_cell("[" + shape + "]", "[" + shape + "]"), integer_cell(elements)});
  }
  std::cout << render(table, parse_table_format(values["format"].as<std::string>()));
  if (values["format"].as<std::string>() == "table")
    std::cout << table.rows.size() << " tensors, " << total << " elements\n";
  return 0;
}

}  // namespace

int checkpoints_command(const std::vector<std::string>& arguments) {
  po::options_description options("checkpoints options");
  options.add_options()("run", po::value<std::string>()->required(), "run id or name")(
      "format", po::value<std::string>()->default_value("table"), "table, csv, json or markdown");
  add_db_option(options);
  po::positional_options_description positional;
  positional.add("run", 1);
  po::variables_map values;
  if (!parse_options("checkpoints", "RUN [options]", options, positional, arguments, values)) return 0;
  const TableFormat format = parse_table_format(values["format"].as<std::string>());
  const RunStore store = open_existing_store(values);
  const RunSummary run = find_run_or_throw(store, values["run"].as<std::string>());
  Table table{{"step", "epoch", "reason", "created", "mb", "train/loss", "eval/top1", "on_disk", "path"}, {}};
  table.json_groups.push_back({"metrics", 5, 2});  // JSON: "metrics": {"train/loss": ..., "eval/top1": ...}
  for (const auto& c : store.checkpoints(run.id)) {
    Cell on_disk = bool_cell(is_checkpoint(c.path));  // true/false for programs, yes/no for people
    on_disk.exact = on_disk.text;
    on_disk.text = is_checkpoint(c.path) ? "yes" : "no";
    table.rows.push_back({integer_cell(c.step), integer_cell(c.epoch), text_cell(c.reason), time_cell(c.created_at),
                          number_cell(static_cast<double>(c.bytes) / 1e6, 2), metric_cell(c.metrics, "train/loss"),
                          metric_cell(c.metrics, "eval/top1"), on_disk, text_cell(c.path)});
  }
  std::cout << render(table, format);
  return 0;
}

namespace {

// The weights and what follows them (export's target), from SOURCE [TARGET]
// or --checkpoint SOURCE [TARGET], as eval and export take the weights.
std::vector<std::string> weights_arguments(const std::string& command, const po::variables_map& values,
                                           std::size_t wanted) {
  std::vector<std::string> rest;
  for (const char* name : {"source", "target"})
    if (values.count(name)) rest.push_back(values[name].as<std::string>());
  if (values.count("checkpoint")) rest.insert(rest.begin(), values["checkpoint"].as<std::string>());
  if (rest.size() > wanted)
    throw UsageError(command + ": the weights are given twice (a positional and --checkpoint); give one");
  if (rest.empty())
    throw UsageError(command + ": give the weights: a run, a checkpoint directory or a file (or --checkpoint)");
  return rest;
}

po::options_description weights_options(const std::string& command) {
  po::options_description options(command + " options");
  options.add_options()("source", po::value<std::string>(), "run id or name, checkpoint directory or .safetensors file")(
      "checkpoint", po::value<std::string>(), "the weights, as SOURCE: a run, a checkpoint directory or a file");
  add_db_option(options);
  return options;
}

}  // namespace

int weights_export_command(const std::vector<std::string>& arguments) {
  po::options_description options = weights_options("weights export");
  options.add_options()("target", po::value<std::string>(), "the .safetensors file to write");
  po::positional_options_description positional;
  positional.add("source", 1).add("target", 1);
  po::variables_map values;
  if (!parse_options("weights export",
                     "RUN|CHECKPOINT FILE.safetensors [options]\n"
                     "       (--checkpoint RUN|CHECKPOINT in place of the first argument, as eval and export take it)",
                     options, positional, arguments, values))
    return 0;
  const auto rest = weights_arguments("weights export", values, 2);
  if (rest.size() < 2) throw UsageError("weights export: give the file to write, e.g. model.safetensors");
  return export_weights(rest[0], rest[1], values);
}

int weights_list_command(const std::vector<std::string>& arguments) {
  po::options_description options = weights_options("weights list");
  options.add_options()("format", po::value<std::string>()->default_value("table"), "table, csv, json or markdown");
  po::positional_options_description positional;
  positional.add("source", 1);
  po::variables_map values;
  if (!parse_options("weights list",
                     "RUN|CHECKPOINT|FILE [options]\n"
                     "       (--checkpoint RUN|CHECKPOINT|FILE in place of the argument, as eval and export take it)",
                     options, positional, arguments, values))
    return 0;
  return list_weights(weights_arguments("weights list", values, 1)[0], values);
}

}  // namespace orchestrate::cli
