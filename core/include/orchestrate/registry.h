// One registry template for every component kind.
//
// A plugin's registration function adds factories here; the host looks
// components up by kind and name. Lookups of unknown names fail with the
// known names and the closest match.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrate/api.h"
#include "orchestrate/error.h"
#include "orchestrate/params.h"

namespace at {
class Tensor;
}
namespace torch::optim {
class Optimizer;
}

namespace orchestrate {

class Dataset;
class Preprocessing;
struct PreprocessingContext;
class Model;
class LrSchedule;
class OptimizerWrapper;
class GradientCompressor;
struct CompressionContext;
class Hook;
struct HookContext;
struct ModelInput;
struct ScheduleContext;
struct OptimizerContext;
struct WrapperContext;
enum class DatasetSplit;
struct DatasetContext;

enum class ComponentKind {
  dataset,
  model,
  optimizer,
  optimizer_wrapper,
  lr_schedule,
  gradient_compression,
  hook,
  preprocessing
};
ORCHESTRATE_API const char* to_string(ComponentKind kind);
ORCHESTRATE_API std::vector<ComponentKind> all_component_kinds();

// Built once per split; the context also carries the run's event sink.
using DatasetFactory = std::function<std::unique_ptr<Dataset>(const Params&, const DatasetContext&)>;
// Built once per variant (train, eval); see preprocessing.h.
using PreprocessingFactory =
    std::function<std::unique_ptr<Preprocessing>(const Params&, const PreprocessingContext&)>;
using ModelFactory = std::function<std::shared_ptr<Model>(const Params&, const ModelInput&)>;
// Builds an optimizer over the context's parameter groups (see optimizer.h).
using OptimizerFactory =
    std::function<std::unique_ptr<torch::optim::Optimizer>(const Params&, const OptimizerContext&)>;
using OptimizerWrapperFactory =
    std::function<std::unique_ptr<OptimizerWrapper>(const Params&, const WrapperContext&)>;
using LrScheduleFactory = std::function<std::unique_ptr<LrSchedule>(const Params&, const ScheduleContext&)>;
// May return null: no compression, gradients are all-reduced densely (the
// built-in "none").
using GradientCompressorFactory =
    std::function<std::unique_ptr<GradientCompressor>(const Params&, const CompressionContext&)>;
using HookFactory = std::function<std::unique_ptr<Hook>(const Params&, const HookContext&)>;

// Declared at registration; checked by the host against the wrapper chain.
struct WrapperRules {
  bool must_come_first = false;  // sees raw micro-batch gradients (accumulation)
  bool must_come_last = false;   // closest to the base optimizer (trust ratios)
  // Wrappers sharing a non-empty group cannot be combined (lars and lamb: "trust_ratio").
  std::string exclusive_group;
  // The wrapper applies the groups' weight decay itself, so the base
  // optimizer is built with weight decay 0 (LARS's "weight decay inside").
  bool takes_over_weight_decay = false;
  // Micro-batches summed into one update; 0: not an accumulator.
  // Computed from the wrapper's params; unset for other wrappers.
  std::function<std::int64_t(const Params&)> micro_batches;
  // The wrapper changes only the gradients and its logged metrics, never
  // the weights or a state of its own, so it may run on an update that the
  // optimizer then skips on the device (SkipsOnDevice, optimizer.h). Without
  // it every fp16 update waits for the host to read its inf/nan check.
  bool only_rewrites_gradients = false;
  // The wrapper changes the weights or a state of its own, but reads
  // UpdateView::skip_flag and leaves them as they were on an update the
  // device skips (LAMB scales its correction by 1 - flag): it may run there too.
  bool honours_skip_flag = false;
};

// Declared by a gradient compressor at registration; checked by the host
// against the recipe before anything is built.
struct CompressionRules {
  // The compressor applies the groups' weight decay itself (added to the
  // gradient before it is compressed), so the base optimizer is built with
  // weight decay 0.
  bool takes_over_weight_decay = false;
  // A problem with the base optimizer for these compressor params ("" when
  // fine): DGC's momentum correction needs a base optimizer without momentum.
  std::function<std::string(const Params& own, const std::string& base_optimizer)> base_optimizer_problem;
};

// How a model's published weights expect images: resized to `resize`, center
// cropped to the input size, scaled to [0, 1], then normalized per channel.
struct PreprocessingPreset {
  std::string name;           // "imagenet", "inception", "none"
  std::vector<double> mean;   // per channel, on [0, 1] pixels; empty: no normalization
  std::vector<double> std;
  std::int64_t resize = 0;    // shorter side before the center crop; 0: no resize
};

// Declared by a model at registration, read by the host before it builds anything.
struct ModelMeta {
  // Glob over parameter names matching the classifier head, the layer whose
  // shape depends on num_classes (MoXing's default_logits_pattern): "fc.*".
  // Transfer learning excludes it by name with `exclude = ["@logits"]`.
  std::string logits_pattern;
  // The input side its published weights were trained at (224, 299); 0: any.
  std::int64_t input_size = 0;
  // Auxiliary classifiers forward_train returns, with their default loss
  // weight (Inception's {"aux", 0.4}); empty for most models.
  std::map<std::string, double> aux_logits;
  PreprocessingPreset preprocessing;
};

// What every entry has, whatever its kind: enough for `plugins` and `describe`.
struct ComponentInfo {
  ComponentKind kind;
  std::string name;
  std::string summary;
  ParamSchema schema;
  std::string plugin;  // name of the plugin that registered it
};

// The closest of `candidates` to `name` by edit distance, or "" if none is close.
ORCHESTRATE_API std::string closest_match(std::string_view name, const std::vector<std::string>& candidates);

// A plugin file the host refused to load, and why. A component that cannot
// be found may have been in one of them, so the "unknown component" error
// names them.
struct RefusedPlugin {
  std::string path;
  std::string message;  // one line: the path, what is wrong, how to fix it
};

// What loading the plugins leaves for every kind's registry: the plugin
// registering now (its components are its), and the files refused.
struct PluginLoading {
  std::string current_plugin;
  std::vector<RefusedPlugin> refused;
};

[[noreturn]] ORCHESTRATE_API void throw_unknown_component(ComponentKind kind, const std::string& name,
                                                          const std::vector<std::string>& known,
                                                          const std::vector<RefusedPlugin>& refused);
[[noreturn]] ORCHESTRATE_API void throw_duplicate_component(const ComponentInfo& existing, const std::string& plugin);

// Kinds without registration-time declarations beyond the schema.
struct NoMeta {};

// `Meta` is what a kind declares besides its schema (a wrapper's ordering
// rules), available to the host before anything is built.
template <class Factory, class Meta = NoMeta>
class ComponentRegistry {
 public:
  struct Entry {
    ComponentInfo info;
    Factory create;
    Meta meta;
  };

  // `loading`: the Registry's, which outlives this; null for a registry of
  // its own (a test's).
  explicit ComponentRegistry(ComponentKind kind, const PluginLoading* loading) : kind_(kind), loading_(loading) {}

  // Adds a component; a name already taken (by any plugin) is an error.
  void add(std::string name, std::string summary, ParamSchema schema, Factory create, Meta meta = {}) {
    const std::string plugin = loading_ ? loading_->current_plugin : std::string();
    if (auto it = entries_.find(name); it != entries_.end()) throw_duplicate_component(it->second.info, plugin);
    ComponentInfo info{kind_, name, std::move(summary), std::move(schema), plugin};
    entries_.emplace(std::move(name), Entry{std::move(info), std::move(create), std::move(meta)});
  }

  const Entry& get(const std::string& name) const {
    if (auto it = entries_.find(name); it != entries_.end()) return it->second;
    throw_unknown_component(kind_, name, names(), loading_ ? loading_->refused : std::vector<RefusedPlugin>{});
  }

  bool contains(const std::string& name) const { return entries_.count(name) != 0; }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, entry] : entries_) out.push_back(name);
    return out;
  }

  std::vector<const ComponentInfo*> infos() const {
    std::vector<const ComponentInfo*> out;
    for (const auto& [name, entry] : entries_) out.push_back(&entry.info);
    return out;
  }

 private:
  ComponentKind kind_;
  const PluginLoading* loading_;
  std::map<std::string, Entry, std::less<>> entries_;
};

// A plugin library the registry has loaded.
struct LoadedPlugin {
  std::string name;
  std::string version;
  std::string library_path;
  std::string torch_version;
  std::string compiler;
};

class ORCHESTRATE_API Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  ComponentRegistry<DatasetFactory>& datasets() { return datasets_; }
  ComponentRegistry<ModelFactory, ModelMeta>& models() { return models_; }
  ComponentRegistry<OptimizerFactory>& optimizers() { return optimizers_; }
  ComponentRegistry<OptimizerWrapperFactory, WrapperRules>& optimizer_wrappers() { return optimizer_wrappers_; }
  ComponentRegistry<LrScheduleFactory>& lr_schedules() { return lr_schedules_; }
  ComponentRegistry<GradientCompressorFactory, CompressionRules>& gradient_compressors() {
    return gradient_compressors_;
  }
  const ComponentRegistry<DatasetFactory>& datasets() const { return datasets_; }
  const ComponentRegistry<ModelFactory, ModelMeta>& models() const { return models_; }
  const ComponentRegistry<OptimizerFactory>& optimizers() const { return optimizers_; }
  const ComponentRegistry<OptimizerWrapperFactory, WrapperRules>& optimizer_wrappers() const {
    return optimizer_wrappers_;
  }
  const ComponentRegistry<LrScheduleFactory>& lr_schedules() const { return lr_schedules_; }
  const ComponentRegistry<GradientCompressorFactory, CompressionRules>& gradient_compressors() const {
    return gradient_compressors_;
  }
  ComponentRegistry<HookFactory>& hooks() { return hooks_; }
  const ComponentRegistry<HookFactory>& hooks() const { return hooks_; }
  ComponentRegistry<PreprocessingFactory>& preprocessing() { return preprocessing_; }
  const ComponentRegistry<PreprocessingFactory>& preprocessing() const { return preprocessing_; }

  // Kind-independent views, for listing, describing and recipe validation.
  std::vector<const ComponentInfo*> components(ComponentKind kind) const;
  const ComponentInfo& component(ComponentKind kind, const std::string& name) const;

  // Used by the plugin host: components added between begin and end belong to
  // `plugin`; `library` keeps the shared library loaded for the registry's life.
  void begin_plugin(const LoadedPlugin& plugin, std::shared_ptr<void> library);
  void end_plugin();
  const std::vector<LoadedPlugin>& plugins() const { return plugins_; }

  // A component name that a later plugin file also registers (the host
  // refuses that file whole): `component` of it then throws PluginError with
  // `message`, so a command that uses the name stops, naming both files,
  // and every other command goes on.
  void add_clash(ComponentKind kind, const std::string& name, std::string message);

  // The plugin files the host refused to load (set once it has scanned):
  // the "unknown component" errors name them.
  void set_refused(std::vector<RefusedPlugin> refused) { loading_.refused = std::move(refused); }
  const std::vector<RefusedPlugin>& refused() const { return loading_.refused; }

 private:
  // Declared first so it is destroyed last: factories and objects made by
  // plugin code must go before the code itself is unloaded.
  std::vector<std::shared_ptr<void>> libraries_;
  std::vector<LoadedPlugin> plugins_;
  PluginLoading loading_;
  ComponentRegistry<DatasetFactory> datasets_;
  ComponentRegistry<ModelFactory, ModelMeta> models_;
  ComponentRegistry<OptimizerFactory> optimizers_;
  ComponentRegistry<OptimizerWrapperFactory, WrapperRules> optimizer_wrappers_;
  ComponentRegistry<LrScheduleFactory> lr_schedules_;
  ComponentRegistry<GradientCompressorFactory, CompressionRules> gradient_compressors_;
  ComponentRegistry<HookFactory> hooks_;
  ComponentRegistry<PreprocessingFactory> preprocessing_;
  // Last, so the members above keep their offsets (inline accessors).
  std::map<std::pair<ComponentKind, std::string>, std::string> clashes_;
};

}  // namespace orchestrate
