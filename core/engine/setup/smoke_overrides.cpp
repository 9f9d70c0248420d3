#include "engine/setup/smoke_overrides.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <type_traits>

#include "checkpoint/model_state.h"
#include "checkpoint/safetensors.h"
#include "engine/dim_reduce/weight_snapshots.h"
#include "engine/precision/autocast_scope.h"
#include "engine/recipe/core_tables.h"
#include "engine/recipe/param_conversion.h"
#include "engine/setup/device.h"
#include "orchestrate/error.h"
#include "orchestrate/model.h"

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

// A core key as the recipe gives it, or else its spec's default: the recipe
// is read here before validation fills the defaults in. A value of another
// type also reads as the default; validation then names it.
template <class T>
T core_value(const toml::table* table, const std::string& table_name, const std::string& key,
             const CoreDefaults& defaults) {
  const T fallback = std::get<T>(defaults.value(table_name + "." + key));
  const toml::node* node = table ? table->get(key) : nullptr;
  return node ? node->value_or(fallback) : fallback;
}

// Writes a core key the smoke run changes, after checking it against its
// spec (core_settings_tables.cpp): a key renamed there, or a value out of
// its range, is then a bug every smoke run names, never a recipe error at a
// confusing place.
template <class Value>
void set_core(toml::table& table, const std::string& table_name, const std::string& key, const Value& value) {
  const TableSpec* declared = find_table(table_name);
  const ParamSpec* spec = declared ? declared->schema.find(key) : nullptr;
  const std::string what = "smoke overrides set [" + table_name + "] " + key;
  if (!spec) throw Error(what + ", which the core tables do not declare (a bug)");
  ParamValue as_param;
  if constexpr (std::is_integral_v<Value>)
    as_param = static_cast<std::int64_t>(value);
  else
    as_param = std::string(value);
  if (auto why = spec->check(as_param); !why.empty()) throw Error(what + ": " + why + " (a bug)");
  table.insert_or_assign(key, value);
}

// The keys the smoke run gives a component, checked against its schema.
void require_declared(const ParamSchema& schema, const std::string& component, const toml::table& table) {
  for (const auto& [key, value] : table)
    if (key.str() != "plugin" && !schema.find(std::string(key.str())))
      throw Error("smoke overrides set " + component + " " + std::string(key.str()) +
                  ", which its schema does not declare (a bug)");
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

// The name of the key `schema` declares with `role`, or "" (no schema, no such key).
std::string key_with_role(const ParamSchema* schema, ParamRole role) {
  const ParamSpec* spec = schema ? schema->find(role) : nullptr;
  return spec ? spec->name : std::string();
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

namespace {

// What the recipe's data would give the model: its class count and channels.
struct DeclaredData {
  std::string plugin;
  std::int64_t classes = kFallbackClasses;
  std::int64_t channels = 3;
};

DeclaredData declared_data(toml::table& root, const Registry& registry, std::vector<std::string>& notes) {
  toml::table* data = table_of(root, "data");
  DeclaredData declared;
  declared.plugin = string_of(data, "plugin");
  Params params;
  const ParamSchema* schema = nullptr;
  if (registry.datasets().contains(declared.plugin)) {
    schema = &registry.datasets().get(declared.plugin).info.schema;
    params = unvalidated_params(*schema, data);
  }
  // The dataset's own keys for these, found by their roles (params.h).
  std::int64_t classes = integer_param(params, key_with_role(schema, ParamRole::num_classes), 0);
  if (classes < 2) classes = array_size(data, key_with_role(schema, ParamRole::class_list));
  if (classes >= 2)
    declared.classes = classes;
  else
    notes.push_back("[data] declares no class count (num_classes, class_names or classes): " +
                    std::to_string(declared.classes) + " classes");
  declared.channels = integer_param(params, key_with_role(schema, ParamRole::image_channels), 3);
  return declared;
}

// The recipe's model at the smallest smoke side it accepts, seeded by the
// recipe's seed so that every rank of a job makes the same stand-in weights.
ProbedModel probe_model(toml::table& root, const Registry& registry, const DeclaredData& data,
                        const CoreDefaults& defaults) {
  toml::table* model = table_of(root, "model");
  const std::string plugin = string_of(model, "plugin");
  if (!registry.models().contains(plugin)) return {};  // validation names the problem
  at::manual_seed(static_cast<std::uint64_t>(core_value<std::int64_t>(table_of(root, "run"), "run", "seed", defaults)));
  const auto& entry = registry.models().get(plugin);
  return smallest_accepted(entry.create, unvalidated_params(entry.info.schema, model), data.channels, data.classes);
}

// Micro-batches per update: the product of what the wrappers accumulate.
std::int64_t micro_batches_per_update(toml::table& root, const Registry& registry) {
  std::int64_t micro_batches = 1;
  toml::table* optimizer = table_of(root, "optimizer");
  toml::array* wrappers = optimizer ? (*optimizer)["wrappers"].as_array() : nullptr;
  if (!wrappers) return micro_batches;
  for (auto& entry : *wrappers) {
    const std::string plugin = string_of(entry.as_table(), "plugin");
    if (!registry.optimizer_wrappers().contains(plugin)) continue;
    const auto& wrapper = registry.optimizer_wrappers().get(plugin);
    if (!wrapper.meta.micro_batches) continue;
    try {
      micro_batches *= std::max<std::int64_t>(
          1, wrapper.meta.micro_batches(unvalidated_params(wrapper.info.schema, entry.as_table())));
    } catch (const std::exception&) {
      // a required key missing: validation says so
    }
  }
  return micro_batches;
}

// [run], [data], [eval] and [preprocessing]: kUpdates updates of kBatch
// mock images at `side`, evaluation on kEvalBatches batches.
void shrink_run_and_data(toml::table& root, const Registry& registry, const DeclaredData& data,
                         const ProbedModel& probed, std::vector<std::string>& notes) {
  const std::int64_t side = probed.side;
  const std::int64_t micro_batches = micro_batches_per_update(root, registry);
  if (toml::table* run = ensure_table(root, "run")) {
    // One intra-op thread: on 2-image batches a second one costs more in
    // waiting than it gains (ResNet-50's update took 6x longer with 2 threads
    // on the busy 2-core CI machine).
    set_core(*run, "run", "threads", 1);
    set_core(*run, "run", "batch_size", kBatch);
    set_core(*run, "run", "epochs", 1);
    set_core(*run, "run", "max_steps", kUpdates);
    set_core(*run, "run", "log_every", 1);
  }
  // The stand-in's keys: its sizes by name (mock is the smoke run's own
  // choice), what it shares with the data it stands in for by role.
  toml::table mock{{"plugin", "mock"},
                   {"train_size", kBatch * micro_batches * kUpdates},
                   {"test_size", kBatch * kEvalBatches}};
  if (registry.datasets().contains("mock")) {  // else validation says the dataset is unknown
    const ParamSchema& schema = registry.datasets().get("mock").info.schema;
    const std::pair<ParamRole, std::int64_t> shared[] = {{ParamRole::num_classes, data.classes},
                                                         {ParamRole::image_channels, data.channels},
                                                         {ParamRole::image_height, side},
                                                         {ParamRole::image_width, side}};
    for (const auto& [role, value] : shared) {
      const std::string key = key_with_role(&schema, role);
      if (key.empty()) throw Error(std::string("smoke: the mock dataset declares no key of role ") + to_string(role));
      mock.insert_or_assign(key, value);
    }
    require_declared(schema, "[data] mock", mock);
  }
  root.insert_or_assign("data", std::move(mock));
  if (toml::table* eval = ensure_table(root, "eval")) set_core(*eval, "eval", "batch_size", kBatch);
  if (toml::table* preprocessing = table_of(root, "preprocessing")) {
    const std::string plugin = string_of(preprocessing, "plugin");
    if (registry.preprocessing().contains(plugin)) {
      const auto& schema = registry.preprocessing().get(plugin).info.schema;
      if (const auto* output = schema.find(ParamRole::output_side)) preprocessing->insert_or_assign(output->name, side);
      if (const auto* resize = schema.find(ParamRole::resize_side))
        preprocessing->insert_or_assign(resize->name, 0);  // straight to the output side
    }
  }
  const std::string model = string_of(table_of(root, "model"), "plugin");
  notes.push_back("[data] " + (data.plugin.empty() ? std::string("(none)") : data.plugin) + " -> mock: " +
                  std::to_string(data.classes) + " classes, " + std::to_string(data.channels) + " channels, " +
                  std::to_string(side) + "x" + std::to_string(side) + " images" +
                  (probed.model ? " (the first side of 64, 75, 96, ... that " + model + " takes)" : std::string()) +
                  "; " + std::to_string(kUpdates) + " updates of " + std::to_string(kBatch) + " images" +
                  (micro_batches > 1 ? " x " + std::to_string(micro_batches) + " micro-batches" : std::string()) +
                  ", evaluation on " + std::to_string(kEvalBatches) + " batches");
  notes.push_back("[run] threads = 1: two-image batches gain nothing from more");
}

// fp16 stays on CUDA, loss scaling included. The CPU runs fp16 autocast but
// without fast kernels: a ResNet-50 update took 8x as long as in fp32 (3.8 s
// against 0.45 s for 2 images), too slow for a smoke run.
void keep_precision_that_runs_fast(toml::table& root, const CoreDefaults& defaults, std::vector<std::string>& notes) {
  toml::table* precision = table_of(root, "precision");
  if (!precision || string_of(precision, "mode") != "fp16") return;
  try {
    const c10::Device device = select_device(core_value<std::string>(table_of(root, "run"), "run", "device", defaults));
    std::optional<std::string> why = AutocastScope::unsupported_reason(device.type(), PrecisionMode::fp16);
    if (!why && !device.is_cuda())
      why = "fp16 autocast on " + device.str() + " has no fast kernels (8x slower than fp32 here), so the loss "
            "scaling is not exercised; a CUDA device keeps fp16";
    if (!why) return;
    set_core(*precision, "precision", "mode", "fp32");
    notes.push_back("[precision] fp16 -> fp32: " + *why);
  } catch (const std::exception&) {
    // device = "cuda" without one: the run reports it
  }
}

// Checkpoints, the serving export and weight snapshots go to the scratch directory.
void redirect_files(toml::table& root, const fs::path& scratch, const CoreDefaults& defaults,
                    std::vector<std::string>& notes) {
  std::vector<std::string> redirected{"checkpoints"};
  if (toml::table* checkpoint = ensure_table(root, "checkpoint"))
    set_core(*checkpoint, "checkpoint", "dir", (scratch / "checkpoints").string());
  if (toml::table* export_table = table_of(root, "export"); export_table && !string_of(export_table, "dir").empty()) {
    set_core(*export_table, "export", "dir", (scratch / "serving").string());
    redirected.push_back("serving export");
  }
  if (toml::table* snapshots = table_of(root, "snapshots")) {
    set_core(*snapshots, "snapshots", "dir", (scratch / "snapshots").string());
    const auto cadence = [&](const char* key) {
      return core_value<std::int64_t>(snapshots, "snapshots", key, defaults);
    };
    if (cadence("every_steps") > 0 || cadence("every_epochs") > 0) {  // every update, so that some are written
      set_core(*snapshots, "snapshots", "every_steps", 1);
      set_core(*snapshots, "snapshots", "every_epochs", 0);
      set_core(*snapshots, "snapshots", "from_epoch", 1);
    }
    redirected.push_back("weight snapshots");
  }
  notes.push_back(join(redirected) + " go to " + scratch.string() + " (removed when the run finishes; kept to look at when it fails or is interrupted)");
}

// Weights the recipe starts from: the model's own initial ones stand in,
// whether the file is here or not, since a smoke run's model (mock data's
// channels and classes) may not fit the real ones.
void stand_in_initial_weights(toml::table& root, const ProbedModel& probed, const fs::path& scratch,
                              std::vector<std::string>& notes) {
  toml::table* checkpoint = table_of(root, "checkpoint");
  const std::string init_from = string_of(checkpoint, "init_from");
  if (init_from.empty()) return;
  if (!probed.model) {
    checkpoint->erase("init_from");
    checkpoint->erase("exclude");
    notes.push_back("init_from \"" + init_from + "\" is not read, and the model could not be built to stand in (" +
                    probed.refusal + "): starting without it");
    return;
  }
  const fs::path stand_in = scratch / "initial_weights.safetensors";
  fs::create_directories(scratch);
  write_safetensors(stand_in.string(), model_state(*probed.model));
  set_core(*checkpoint, "checkpoint", "init_from", stand_in.string());
  notes.push_back("init_from \"" + init_from + "\" is not read: the model's own initial weights stand in (" +
                  stand_in.string() + "), so exclude, strict and frozen still run, on weights that are not the "
                  "pretrained ones");
}

// Stage 2 of dimension-reduce training: stand-ins for stage 1's snapshots
// (the initial weights plus noise) and a PCA matrix computed from them.
void stand_in_snapshots(toml::table& root, const ProbedModel& probed, const fs::path& scratch,
                        const CoreDefaults& defaults, std::vector<std::string>& notes) {
  toml::table* dim_reduce = table_of(root, "dim_reduce");
  if (!core_value<bool>(dim_reduce, "dim_reduce", "enabled", defaults) || !probed.model) return;
  const fs::path stand_ins = scratch / "stage1_snapshots";
  WeightSnapshots writer({1, 0, 1, 0}, stand_ins.string());
  at::NoGradGuard no_grad;
  for (std::int64_t step = 1; step <= kStandInSnapshots; ++step) {
    NamedParameters parameters;
    for (const auto& item : probed.model->named_parameters(/*recurse=*/true))
      parameters.emplace_back(item.key(), item.value() + 0.01 * at::randn_like(item.value()));
    writer.save(parameters, step, 1);
  }
  notes.push_back("[dim_reduce] stage 1's snapshots are not read: " + std::to_string(kStandInSnapshots) +
                  " snapshots of the initial weights plus noise stand in (" + stand_ins.string() +
                  "), n_components = " + std::to_string(kStandInSnapshots - 1) + ", the PCA matrix computed from them");
  set_core(*dim_reduce, "dim_reduce", "snapshots", stand_ins.string());
  set_core(*dim_reduce, "dim_reduce", "pca_mat_path", (scratch / "pca_mat.safetensors").string());
  set_core(*dim_reduce, "dim_reduce", "n_components", kStandInSnapshots - 1);
  // Both stages in one run (from_epoch > 1): an epoch of each, so the switch
  // from the optimizer to the subspace runs too.
  if (core_value<std::int64_t>(dim_reduce, "dim_reduce", "from_epoch", defaults) > 1) {
    if (toml::table* run = table_of(root, "run")) {
      set_core(*run, "run", "epochs", 2);
      set_core(*run, "run", "max_steps", 2 * kUpdates);
    }
    set_core(*dim_reduce, "dim_reduce", "from_epoch", 2);
    notes.push_back("[dim_reduce] both stages: epoch 1 trains with the optimizer, epoch 2 in the subspace "
                    "(from_epoch = 2, " + std::to_string(2 * kUpdates) + " updates)");
  }
}

}  // namespace

SmokeOverrides::SmokeOverrides(const Registry& registry, std::string scratch_dir, const CoreDefaults& defaults)
    : registry_(registry), scratch_dir_(std::move(scratch_dir)), defaults_(defaults) {}

void SmokeOverrides::apply(toml::table& root) {
  const DeclaredData data = declared_data(root, registry_, notes_);
  const ProbedModel probed = probe_model(root, registry_, data, defaults_);
  shrink_run_and_data(root, registry_, data, probed, notes_);
  keep_precision_that_runs_fast(root, defaults_, notes_);
  redirect_files(root, scratch_dir_, defaults_, notes_);
  stand_in_initial_weights(root, probed, scratch_dir_, notes_);
  stand_in_snapshots(root, probed, scratch_dir_, defaults_, notes_);
}

}  // namespace orchestrate
