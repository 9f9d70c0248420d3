// `orchestrate export serving` and `orchestrate predict`: a trained model into
// a Triton model repository, and that exported model run on image files.
#include <torch/csrc/jit/serialization/import.h>
#include "store/run_store.h"

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <sstream>

#include "analysis/table_format.h"
#include "checkpoint/checkpoint.h"
#include "cli/checkpoint_argument.h"
#include "cli/command.h"
#include "cli/options.h"
#include "cli/plugin_options.h"
#include "cli/shipped_recipes.h"
#include "engine/recipe/recipe.h"
#include "export/model_repository.h"
#include "export/onnx_export.h"
#include "export/preprocessing_spec.h"
#include "export/serving_export.h"
#include "orchestrate/error.h"
#include "orchestrate/image/image_decode.h"

namespace orchestrate::cli {

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path.string() + " is missing; the model directory is incomplete, export it again");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The training run's record gains an "export" event, when its store is at hand.
void record_export_event(const po::variables_map& values, const std::string& run_id, const ExportedVersion& exported) {
  try {
    RunStore store = open_existing_store(values, StoreAccess::read_write);
    if (const auto run = store.find_run(run_id))
      store.record_event(run->id, "export",
                         "serving model version " + std::to_string(exported.version) + " in " + exported.version_dir);
  } catch (const UsageError&) {
    // No store there: the export stands on its own (export.json says where it came from).
  }
}

// The model to export: RUN|CHECKPOINT (positional or --checkpoint), whose
// checkpoint holds the recipe that builds the model; or RECIPE --checkpoint
// WEIGHTS, where the recipe builds it and WEIGHTS (a .safetensors file, a
// checkpoint directory or a run) fills it, as `orchestrate eval` takes them.
ServableModel servable_of(const std::string& command, const po::variables_map& values, const Registry& registry,
                          std::string& described) {
  const bool has_positional = values.count("source") > 0, has_checkpoint = values.count("checkpoint") > 0;
  if (!has_positional && !has_checkpoint)
    throw UsageError(command + ": give what to export: a run or checkpoint directory (RUN, or --checkpoint RUN|DIR), "
                     "or RECIPE --checkpoint FILE.safetensors");
  if (has_positional && has_checkpoint) {
    const std::string weights = checkpoint_of(values["checkpoint"].as<std::string>(), values);
    const Recipe recipe = load_recipe(recipe_file_or_shipped(values["source"].as<std::string>()), {}, registry);
    described = weights + " in " + recipe.path + "'s model";
    return load_servable_weights(recipe, weights, registry);
  }
  const std::string checkpoint =
      checkpoint_of(values[has_checkpoint ? "checkpoint" : "source"].as<std::string>(), values);
  if (!is_checkpoint(checkpoint))
    throw UsageError(command + ": " + checkpoint +
                     " is a weights file, which does not say what model it fits; give the recipe that builds it: "
                     "orchestrate " + command + " RECIPE --checkpoint " + checkpoint + " -o " +
                     (command == "export onnx" ? "FILE.onnx" : "DIR"));
  described = checkpoint;
  return load_servable_checkpoint(checkpoint, registry);
}

// What export serving and export onnx share: -o given, the plugins loaded,
// the model built with its weights; then `write` does the export. (The
// registry outlives the model, which its plugins made.)
int with_servable(const std::string& command, const po::variables_map& values, const std::string& output_hint,
                  const std::function<int(ServableModel&, const std::string& described)>& write) {
  if (!values.count("output"))
    throw UsageError(command + ": give the " + output_hint + " to write with -o " +
                     (command == "export onnx" ? "FILE.onnx (--output FILE.onnx)" : "DIR (--output DIR)"));
  Registry registry;  // declared first: outlives every object its plugins create
  load_all_plugins(registry, values);
  std::string described;
  ServableModel servable = servable_of(command, values, registry, described);
  return write(servable, described);
}

int export_serving(const po::variables_map& values) {
  return with_servable("export serving", values, "model repository", [&](ServableModel& servable, const std::string& described) {
    ExportSettings settings;
    settings.dir = values["output"].as<std::string>();
    settings.name = values["name"].as<std::string>();
    settings.top_k = values["top-k"].as<std::int64_t>();
    settings.max_batch_size = values["max-batch-size"].as<std::int64_t>();
    if (settings.top_k < 1 || settings.max_batch_size < 1)
      throw UsageError("export serving: --top-k and --max-batch-size must be at least 1");
    const ExportedVersion exported = export_for_serving(servable, settings);
    if (servable.provenance.count("run_id")) record_export_event(values, servable.provenance["run_id"], exported);
    std::cout << "exported " << described << " as version " << exported.version << " of " << exported.model_dir
              << "\n  " << exported.version_dir << "/model.pt (TorchScript: images -> logits, top-k indices, "
              << "top-k confidences)\n  " << exported.model_dir << "/config.pbtxt (Triton, pytorch_libtorch)\n"
              << "try it: orchestrate predict " << exported.model_dir << " IMAGE...\n";
    return 0;
  });
}

#ifndef ORCHESTRATE_SETUP_PYTHON
#define ORCHESTRATE_SETUP_PYTHON ""
#endif

// The Python that converts to ONNX, and why that one: $ORCHESTRATE_PYTHON
// (the user's choice), else the environment scripts/setup made for this
// build, which has torch, onnx and onnxruntime (python3 on PATH seldom has:
// a new user's first export failed), else python3 on PATH.
struct OnnxPython {
  std::string path;
  std::string chosen_as;
};
OnnxPython onnx_python() {
  if (const char* configured = std::getenv("ORCHESTRATE_PYTHON"); configured && *configured)
    return {configured, "$ORCHESTRATE_PYTHON"};
  std::error_code error;
  if (const std::string setup = ORCHESTRATE_SETUP_PYTHON; !setup.empty() && fs::is_regular_file(setup, error))
    return {setup, "the environment scripts/setup made"};
  return {"python3", "python3 on PATH"};
}

int export_onnx_file(const po::variables_map& values) {
  return with_servable("export onnx", values, "file", [&](ServableModel& servable, const std::string& described) {
    OnnxSettings settings;
    settings.path = values["output"].as<std::string>();
    settings.top_k = values["top-k"].as<std::int64_t>();
    settings.opset = values["opset"].as<int>();
    const OnnxPython python = onnx_python();
    settings.python = python.path;
    if (settings.top_k < 1) throw UsageError("export onnx: --top-k must be at least 1");
    const OnnxExport exported = export_onnx(servable, settings);
    std::cout << "exported " << described << " to " << exported.path << " (ONNX opset " << settings.opset
              << ": images -> logits, topk_indices, topk_confidences)\n  checked with onnxruntime "
              << exported.onnxruntime_version << " against the TorchScript: logits within "
              << exported.max_logit_difference << "\n  converted by " << python.path << " ("
              << python.chosen_as << ")\n";
    return 0;
  });
}

// MODEL_DIR: a version directory, or a model directory (its newest version).
fs::path version_directory(const fs::path& model_dir) {
  if (fs::is_regular_file(model_dir / "model.pt")) return model_dir;
  const auto versions = model_versions(model_dir.string());
  if (versions.empty())
    throw UsageError(model_dir.string() +
                     " holds no exported model (model.pt, or numbered version directories); make one with "
                     "`orchestrate export serving RUN -o DIR`");
  return model_dir / std::to_string(versions.back());
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// What export serving and export onnx both take: the model and its
// weights, the output, the plugins and the store.
po::options_description export_model_options(const std::string& command, const char* output_what,
                                             const ExportSettings& defaults) {
  po::options_description options(command + " options");
  options.add_options()(
      "source", po::value<std::string>(),
      "a run id or name or a checkpoint directory; or, with --checkpoint, the recipe that builds the model")(
      "checkpoint", po::value<std::string>(),
      "the weights: a run, a checkpoint directory, or a .safetensors file (then give the RECIPE)")(
      "output,o", po::value<std::string>(), output_what)(
      "top-k", po::value<std::int64_t>()->default_value(defaults.top_k),
      "classes the model returns per image");
  add_plugin_path_option(options);
  add_db_option(options);
  return options;
}

}  // namespace

int export_serving_command(const std::vector<std::string>& arguments) {
  const ExportSettings defaults = export_defaults();
  po::options_description options =
      export_model_options("export serving", "the model repository directory (--out works too)", defaults);
  options.add_options()("name", po::value<std::string>()->default_value(""),
                        "the model's directory name (default: the run name)")(
      "max-batch-size", po::value<std::int64_t>()->default_value(defaults.max_batch_size),
      "config.pbtxt's max_batch_size");
  po::positional_options_description positional;
  positional.add("source", 1);
  po::variables_map values;
  if (!parse_options("export serving",
                     "RUN|CHECKPOINT -o DIR [options]\n"
                     "       orchestrate export serving RECIPE --checkpoint RUN|DIR|FILE.safetensors -o DIR [options]",
                     options, positional, arguments, values))
    return 0;
  return export_serving(values);
}

int export_onnx_command(const std::vector<std::string>& arguments) {
  po::options_description options = export_model_options("export onnx", "the .onnx file to write", export_defaults());
  options.add_options()("opset", po::value<int>()->default_value(17), "the ONNX opset to export to");
  po::positional_options_description positional;
  positional.add("source", 1);
  po::variables_map values;
  if (!parse_options("export onnx",
                     "RUN|CHECKPOINT -o FILE.onnx [options]\n"
                     "       orchestrate export onnx RECIPE --checkpoint RUN|DIR|FILE.safetensors -o FILE.onnx [options]",
                     options, positional, arguments, values))
    return 0;
  return export_onnx_file(values);
}

int predict_command(const std::vector<std::string>& arguments) {
  po::options_description options("predict options");
  options.add_options()("model", po::value<std::string>()->required(),
                        "an exported model directory (its newest version) or one version directory")(
      "images", po::value<std::vector<std::string>>()->required(), "JPEG or PNG files")(
      "top-k", po::value<std::int64_t>()->default_value(0), "classes to show per image; 0: all the model returns")(
      "format", po::value<std::string>()->default_value("table"), "table, csv, json or markdown");
  po::positional_options_description positional;
  positional.add("model", 1).add("images", -1);
  po::variables_map values;
  if (!parse_options("predict", "MODEL_DIR IMAGE... [options]", options, positional, arguments, values)) return 0;
  const TableFormat format = parse_table_format(values["format"].as<std::string>());
  const fs::path version_dir = version_directory(values["model"].as<std::string>());
  const PreprocessingSpec spec = parse_preprocessing_spec(read_text(version_dir / "preprocessing.json"),
                                                          (version_dir / "preprocessing.json").string());
  const std::vector<std::string> labels = lines_of(read_text(version_dir / "labels.txt"));
  torch::jit::Module model = torch::jit::load((version_dir / "model.pt").string());
  model.eval();

  const auto& images = values["images"].as<std::vector<std::string>>();
  std::vector<at::Tensor> inputs;
  for (const auto& path : images) inputs.push_back(apply_preprocessing(read_image(path, spec.channels), spec));
  at::NoGradGuard no_grad;
  const auto outputs = model.forward({at::stack(inputs)}).toTupleRef().elements();
  const auto indices = outputs.at(1).toTensor();
  const auto confidences = outputs.at(2).toTensor();
  std::int64_t k = values["top-k"].as<std::int64_t>();
  if (k < 0 || k > indices.size(1))
    throw UsageError("predict: --top-k " + std::to_string(k) + ": the model returns the top " +
                     std::to_string(indices.size(1)) + " classes (export it with a larger --top-k)");
  if (k == 0) k = indices.size(1);
  Table table{{"image", "rank", "class", "label", "confidence"}, {}};
  for (std::size_t i = 0; i < images.size(); ++i)
    for (std::int64_t r = 0; r < k; ++r) {
      const std::int64_t cls = indices[static_cast<std::int64_t>(i)][r].item<std::int64_t>();
      const std::string label = cls >= 0 && cls < static_cast<std::int64_t>(labels.size())
                                    ? labels[static_cast<std::size_t>(cls)]
                                    : std::to_string(cls);
      table.rows.push_back({text_cell(images[i]), integer_cell(r + 1), integer_cell(cls), text_cell(label),
                            number_cell(confidences[static_cast<std::int64_t>(i)][r].item<double>(), 4)});
    }
  std::cout << render(table, format);
  return 0;
}

}  // namespace orchestrate::cli
