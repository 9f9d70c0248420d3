#include "smoke_overrides.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "device.h"
#include "dim_reduce/weight_snapshots.h"
#include "orchestrate/model.h"
#include "param_conversion.h"
#include "precision/autocast_scope.h"
#include "safetensors.h"
#include "training_state.h"

namespace orchestrate {

namespace {

namespace fs = std::filesystem;

// Image sides tried, smallest first: the first one the model's factory
// accepts is the smoke run's (ResNet, VGG and the ConvNet take 64; the
// Inceptions 75, or 299 with Inception v3's aux head). Not 32, which ResNet
// and VGG accept: ResNet-50's last feature map is then 1x1, and batch norm
// over two images of one value each gave a gradient norm of 2e10 (4e3 at 64),
// which blew DGC's first update up.
constexpr std::int64_t kSmokeSides[] = {64, 75, 96, 128, 160, 224, 299};
constexpr std::int64_t kBatch = 2;    // more than one image: batch norm needs two values per channel
constexpr std::int64_t kUpdates = 2;  // the second proves that the first left a state to continue from
constexpr std::int64_t kEvalBatches = 2;
constexpr std::int64_t kFallbackClasses = 10;
constexpr std::int64_t kStandInSnapshots = 3;

toml::table* table_of(toml::table& root, const std::string& name) { return root[name].as_table(); }

// The table `name`, created when absent; nullptr when the recipe has a
// non-table there, which validation then reports.
toml::table* ensure_table(toml::table& root, const std::string& name) {
  if (!root.contains(name)) root.insert_or_assign(name, toml::table{});
  return root[name].as_table();
}

std::string string_of(const toml::table* table, const std::string& key, const std::string& fallback = "") {
  const toml::node* node = table ? table->get(key) : nullptr;
  return node ? node->value_or(fallback) : fallback;
}

// A component's params from a table that is not validated yet: the schema's
// defaults, and the table's values where they convert. What does not convert
// stays at its default here; the validation that follows reports it.
Params unvalidated_params(const ParamSchema& schema, const toml::table* table) {
  Params params;
  for (const auto& spec : schema.specs()) {
    if (const toml::node* node = table ? table->get(spec.name) : nullptr) {
      std::string why;
      if (auto value = value_from_toml(spec, *node, why); value && why.empty() && spec.check(*value).empty()) {
        params.set(spec.name, *value);
        continue;
      }
    }
    if (spec.default_value) params.set(spec.name, *spec.default_value);
  }
  return params;
}

std::int64_t integer_param(const Params& params, const std::string& name, std::int64_t fallback) {
  try {
    return params.has(name) ? params.integer(name) : fallback;
  } catch (const std::exception&) {
    return fallback;  // declared with another type: not the key this looks for
  }
}

std::int64_t array_size(const toml::table* table, const std::string& key) {
  const toml::node* node = table ? table->get(key) : nullptr;
  return node && node->is_array() ? static_cast<std::int64_t>(node->as_array()->size()) : 0;
}

struct ProbedModel {
  std::int64_t side = kSmokeSides[0];
  std::shared_ptr<Model> model;  // built at `side`; null when no side was accepted
  std::string refusal;           // the factory's last word when none was
};

ProbedModel smallest_accepted(const ModelFactory& create, const Params& params, std::int64_t channels,
                              std::int64_t classes) {
  ProbedModel probed;
  for (const std::int64_t side : kSmokeSides) {
    try {
      probed.model = create(params, ModelInput{channels, side, side, classes});
      if (probed.model) {
        probed.side = side;
        return probed;
      }
    } catch (const std::exception& e) {
      probed.refusal = e.what();
    }
  }
  probed.side = kSmokeSides[0];
  return probed;
}

// "a", "a and b", "a, b and c".
std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return out;
}

}  // namespace

SmokeOverrides::SmokeOverrides(const Registry& registry, std::string scratch_dir)
    : registry_(registry), scratch_dir_(std::move(scratch_dir)) {}

void SmokeOverrides::apply(toml::table& root) {
  const fs::path scratch(scratch_dir_);
  toml::table* run = ensure_table(root, "run");

  // What the recipe's data would be: its class count and channels.
  toml::table* data = table_of(root, "data");
  const std::string data_plugin = string_of(data, "plugin");
  Params data_params;
  if (registry_.datasets().contains(data_plugin))
    data_params = unvalidated_params(registry_.datasets().get(data_plugin).info.schema, data);
  std::int64_t classes = integer_param(data_params, "num_classes", 0);
  for (const char* list : {"class_names", "classes"})
    if (classes < 2) classes = array_size(data, list);
  if (classes < 2) {
    classes = kFallbackClasses;
    notes_.push_back("[data] declares no class count (num_classes, class_names or classes): " +
                     std::to_string(classes) + " classes");
  }
  const std::int64_t channels = integer_param(data_params, "channels", 3);

  // The model at the smallest side it accepts; kept, as it may stand in for missing weights.
  toml::table* model_table = table_of(root, "model");
  const std::string model_plugin = string_of(model_table, "plugin");
  ProbedModel probed;
  if (registry_.models().contains(model_plugin)) {
    const toml::node* seed_node = run ? run->get("seed") : nullptr;
    const std::int64_t seed = seed_node ? seed_node->value_or<std::int64_t>(42) : 42;
    at::manual_seed(static_cast<std::uint64_t>(seed));  // the same stand-in weights on every rank
    probed = smallest_accepted(registry_.models().get(model_plugin).create,
                               unvalidated_params(registry_.models().get(model_plugin).info.schema, model_table),
                               channels, classes);
  }
  const std::int64_t side = probed.side;

  // Updates of kBatch images, each of as many micro-batches as the wrappers accumulate.
  std::int64_t micro_batches = 1;
  if (toml::table* optimizer = table_of(root, "optimizer"))
    if (toml::array* wrappers = (*optimizer)["wrappers"].as_array())
      for (auto& entry : *wrappers) {
        const std::string plugin = string_of(entry.as_table(), "plugin");
        if (!registry_.optimizer_wrappers().contains(plugin)) continue;
        const auto& wrapper = registry_.optimizer_wrappers().get(plugin);
        if (!wrapper.meta.micro_batches) continue;
        try {
          micro_batches *= std::max<std::int64_t>(
              1, wrapper.meta.micro_batches(unvalidated_params(wrapper.info.schema, entry.as_table())));
        } catch (const std::exception&) {
          // a required key missing: validation says so
        }
      }

  if (run) {
    // One intra-op thread: on 2-image batches a second one costs more in
    // waiting than it gains (ResNet-50's update took 6x longer with 2 threads
    // on the busy 2-core CI machine).
    run->insert_or_assign("threads", 1);
    run->insert_or_assign("batch_size", kBatch);
    run->insert_or_assign("epochs", 1);
    run->insert_or_assign("max_steps", kUpdates);
    run->insert_or_assign("log_every", 1);
  }
  root.insert_or_assign("data", toml::table{{"plugin", "mock"},
                                            {"num_classes", classes},
                                            {"channels", channels},
                                            {"height", side},
                                            {"width", side},
                                            {"train_size", kBatch * micro_batches * kUpdates},
                                            {"test_size", kBatch * kEvalBatches}});
  notes_.push_back("[data] " + (data_plugin.empty() ? std::string("(none)") : data_plugin) + " -> mock: " +
                   std::to_string(classes) + " classes, " + std::to_string(channels) + " channels, " +
                   std::to_string(side) + "x" + std::to_string(side) + " images" +
                   (probed.model ? " (the first side of 64, 75, 96, ... that " + model_plugin + " takes)"
                                 : std::string()) +
                   "; " +
                   std::to_string(kUpdates) + " updates of " + std::to_string(kBatch) + " images" +
                   (micro_batches > 1 ? " x " + std::to_string(micro_batches) + " micro-batches" : std::string()) +
                   ", evaluation on " + std::to_string(kEvalBatches) + " batches");
  if (toml::table* eval = ensure_table(root, "eval")) eval->insert_or_assign("batch_size", kBatch);

  if (toml::table* preprocessing = table_of(root, "preprocessing")) {
    const std::string plugin = string_of(preprocessing, "plugin");
    if (registry_.preprocessing().contains(plugin)) {
      const auto& schema = registry_.preprocessing().get(plugin).info.schema;
      if (schema.find("size")) preprocessing->insert_or_assign("size", side);
      if (schema.find("resize_size")) preprocessing->insert_or_assign("resize_size", 0);  // straight to `size`
    }
  }

  // fp16 stays on CUDA, loss scaling included. The CPU runs fp16 autocast
  // but without fast kernels: a ResNet-50 update took 8x as long as in fp32
  // (3.8 s against 0.45 s for 2 images), too slow for a smoke run.
  if (toml::table* precision = table_of(root, "precision"); precision && string_of(precision, "mode") == "fp16") {
    try {
      const c10::Device device = select_device(string_of(run, "device", "auto"));
      std::optional<std::string> why = AutocastScope::unsupported_reason(device.type(), PrecisionMode::fp16);
      if (!why && !device.is_cuda())
        why = "fp16 autocast on " + device.str() + " has no fast kernels (8x slower than fp32 here), so the loss "
              "scaling is not exercised; a CUDA device keeps fp16";
      if (why) {
        precision->insert_or_assign("mode", "fp32");
        notes_.push_back("[precision] fp16 -> fp32: " + *why);
      }
    } catch (const std::exception&) {
      // device = "cuda" without one: the run reports it
    }
  }

  // Files the run writes go to the scratch directory.
  std::vector<std::string> redirected{"checkpoints"};
  toml::table* checkpoint = ensure_table(root, "checkpoint");
  if (checkpoint) checkpoint->insert_or_assign("dir", (scratch / "checkpoints").string());
  if (toml::table* export_table = table_of(root, "export"); export_table && !string_of(export_table, "dir").empty()) {
    export_table->insert_or_assign("dir", (scratch / "serving").string());
    redirected.push_back("serving export");
  }
  if (toml::table* snapshots = table_of(root, "snapshots")) {
    snapshots->insert_or_assign("dir", (scratch / "snapshots").string());
    const auto cadence = [&](const char* key) {
      const toml::node* node = snapshots->get(key);
      return node ? node->value_or<std::int64_t>(0) : std::int64_t{0};
    };
    const bool on = cadence("every_steps") > 0 || cadence("every_epochs") > 0;
    if (on) {  // every update of the smoke run, so that some are written
      snapshots->insert_or_assign("every_steps", 1);
      snapshots->insert_or_assign("every_epochs", 0);
      snapshots->insert_or_assign("from_epoch", 1);
    }
    redirected.push_back("weight snapshots");
  }
  notes_.push_back(join(redirected) + " go to " + scratch_dir_ + " (removed when the run finishes)");
  if (run) notes_.push_back("[run] threads = 1: two-image batches gain nothing from more");

  // Weights the recipe starts from: the model's own initial ones stand in,
  // whether the file is here or not, since a smoke run's model (mock data's
  // channels and classes) may not fit the real ones, and a smoke run reads
  // none of the user's files.
  const std::string init_from = string_of(checkpoint, "init_from");
  if (!init_from.empty()) {
    if (probed.model) {
      const fs::path stand_in = scratch / "initial_weights.safetensors";
      fs::create_directories(scratch);
      write_safetensors(stand_in.string(), model_state(*probed.model));
      checkpoint->insert_or_assign("init_from", stand_in.string());
      notes_.push_back("init_from \"" + init_from + "\" is not read: the model's own initial weights stand in (" +
                       stand_in.string() + "), so exclude, strict and frozen still run, on weights that are not "
                       "the pretrained ones");
    } else {
      checkpoint->erase("init_from");
      checkpoint->erase("exclude");
      notes_.push_back("init_from \"" + init_from + "\" is not read, and the model could not be built to stand in (" +
                       probed.refusal + "): starting without it");
    }
  }

  // Stage 2 of dimension-reduce training: stand-ins for stage 1's snapshots
  // and for a saved PCA matrix, for the same reasons.
  toml::table* dim_reduce = table_of(root, "dim_reduce");
  if (dim_reduce && dim_reduce->get("enabled") && dim_reduce->get("enabled")->value_or(false) && probed.model) {
    const fs::path stand_ins = scratch / "stage1_snapshots";
    WeightSnapshots writer({1, 0, 1, 0}, stand_ins.string());
    at::NoGradGuard no_grad;
    for (std::int64_t step = 1; step <= kStandInSnapshots; ++step) {
      NamedParameters parameters;
      for (const auto& item : probed.model->named_parameters(/*recurse=*/true))
        parameters.emplace_back(item.key(), item.value() + 0.01 * at::randn_like(item.value()));
      writer.save(parameters, step, 1);
    }
    notes_.push_back("[dim_reduce] snapshots \"" + string_of(dim_reduce, "snapshots") + "\" are not read: " +
                     std::to_string(kStandInSnapshots) + " snapshots of the initial weights plus noise stand in (" +
                     stand_ins.string() + "), n_components = " + std::to_string(kStandInSnapshots - 1) +
                     ", the PCA matrix computed from them");
    dim_reduce->insert_or_assign("snapshots", stand_ins.string());
    dim_reduce->insert_or_assign("pca_mat_path", (scratch / "pca_mat.safetensors").string());
    dim_reduce->insert_or_assign("n_components", kStandInSnapshots - 1);
  }
}

}  // namespace orchestrate
