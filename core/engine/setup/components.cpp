#include "engine/setup/components.h"

#include "engine/setup/parameter_groups.h"
#include "engine/setup/run_identity.h"
#include "engine/setup/warmup_schedule.h"
#include "engine/setup/weight_transfer.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace {

template <class Make>
auto guarded(const std::string& table, const std::string& plugin, Make make) {
  try {
    return make();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("[" + table + "] " + plugin + ": " + exception_reason(e));
  }
}

template <class T>
void require(const T& made, const std::string& table, const std::string& plugin, const char* what) {
  if (!made) throw Error("[" + table + "] " + plugin + ": the plugin returned no " + what + " (a plugin bug)");
}

std::string device_skip_blocker(const TrainingComponents& c, const OptimizerSettings& s, const Registry& registry) {
  if (dynamic_cast<SkipsOnDevice*>(c.optimizer.get()) == nullptr)
    return "optimizer " + s.plugin + " cannot skip an update on the device";
  for (const auto& w : s.wrappers)
    if (const auto& rules = registry.optimizer_wrappers().get(w.plugin).meta;
        !rules.only_rewrites_gradients && !rules.honours_skip_flag)
      return "wrapper " + w.plugin + " may change more than the gradients and does not honour the skip flag";
  return "";
}

void build_optimizer_chain(TrainingComponents& c, const OptimizerSettings& s, const Registry& registry,
                           bool compressor_decays) {
  bool wrapper_decays = compressor_decays;
  for (const auto& w : s.wrappers) {
    const auto& entry = registry.optimizer_wrappers().get(w.plugin);
    wrapper_decays = wrapper_decays || entry.meta.takes_over_weight_decay;
    if (entry.meta.micro_batches) c.micro_batches_per_update *= entry.meta.micro_batches(w.params);
  }
  // A wrapper (or the gradient compressor) that applies weight decay itself
  // gets the true coefficients; the base optimizer then must not decay a second time.
  OptimizerContext base{c.groups};
  if (wrapper_decays)
    for (auto& group : base.groups) group.weight_decay = 0.0;
  c.optimizer = guarded("optimizer", s.plugin, [&] { return registry.optimizers().get(s.plugin).create(s.params, base); });
  require(c.optimizer, "optimizer", s.plugin, "optimizer");
  if (c.optimizer->param_groups().size() != c.groups.size())
    throw Error("[optimizer] " + s.plugin + ": the plugin made " + std::to_string(c.optimizer->param_groups().size()) +
                " param groups for " + std::to_string(c.groups.size()) + " parameter groups (a plugin bug)");
  const WrapperContext context{c.groups, s.base_lr};
  for (std::size_t i = 0; i < s.wrappers.size(); ++i) {
    const auto& w = s.wrappers[i];
    const std::string table = "optimizer.wrappers." + std::to_string(i);
    c.wrappers.push_back(
        guarded(table, w.plugin, [&] { return registry.optimizer_wrappers().get(w.plugin).create(w.params, context); }));
    require(c.wrappers.back(), table, w.plugin, "wrapper");
  }
  c.device_skip_blocker = device_skip_blocker(c, s, registry);
}

}  // namespace

std::int64_t run_length_in_updates(std::int64_t max_steps, std::int64_t epochs, std::int64_t updates_per_epoch) {
  return max_steps > 0 ? max_steps : epochs * updates_per_epoch;
}

std::unique_ptr<LrSchedule> build_schedule(const Settings& s, const Registry& registry, std::int64_t updates_per_epoch,
                                           std::int64_t total_updates) {
  const ScheduleSettings& sched = s.schedule;
  std::int64_t warmup = 0;
  if (sched.warmup != WarmupShape::none) {
    const double length = sched.warmup_length * (sched.warmup_in_epochs ? static_cast<double>(updates_per_epoch) : 1.0);
    warmup = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(length)));
  }
  const ScheduleContext context{s.optimizer.base_lr, updates_per_epoch,
                                std::max<std::int64_t>(1, total_updates - warmup)};
  auto schedule = guarded("schedule", sched.plugin,
                          [&] { return registry.lr_schedules().get(sched.plugin).create(sched.params, context); });
  require(schedule, "schedule", sched.plugin, "schedule");
  if (warmup == 0) return schedule;
  return std::make_unique<WarmupThenSchedule>(sched.warmup, warmup, sched.warmup_start_lr, std::move(schedule));
}

namespace {

// Null for "none": the dense all-reduce needs no compressor.
std::unique_ptr<GradientCompressor> build_compressor(const TrainingComponents& c, const Settings& s,
                                                     const Registry& registry, const ComputeSetup& compute) {
  const CompressionContext context{c.groups, compute.world_size, c.updates_per_epoch};
  const auto& plugin = s.compression.plugin;
  return guarded("gradient_compression", plugin,
                 [&] { return registry.gradient_compressors().get(plugin).create(s.compression.params, context); });
}

std::unique_ptr<Dataset> build_split(const Settings& s, const Registry& registry, DatasetSplit split,
                                     DataEventSink* events = nullptr) {
  const auto& data = registry.datasets().get(s.data_plugin);
  auto dataset = guarded("data", s.data_plugin,
                         [&] { return data.create(s.data_params, DatasetContext{split, events, &registry}); });
  require(dataset, "data", s.data_plugin, "dataset");
  return dataset;
}

}  // namespace

std::unique_ptr<Dataset> build_test_set(const Settings& s, const Registry& registry) {
  return build_split(s, registry, DatasetSplit::test);
}

std::unique_ptr<Dataset> build_train_set(const Settings& s, const Registry& registry, DataEventSink* events) {
  return build_split(s, registry, DatasetSplit::train, events);
}

// A random-access dataset is always fully shuffled, so asking for a buffer
// there is a mistake the user hears about.
std::int64_t stream_shuffle_buffer(const Settings& s, const Dataset& train_set) {
  const std::int64_t size = s.run.shuffle_buffer_size;
  if (size > 0 && !train_set.info().sequential)
    throw RecipeError("[run] shuffle_buffer_size = " + std::to_string(size) + ": [data] " + s.data_plugin +
                      " is read by index and fully shuffled every epoch; a shuffle buffer is for stream datasets "
                      "(tfrecord); remove the key");
  return size;
}

std::unique_ptr<Preprocessing> build_preprocessing(const Settings& s, const Registry& registry,
                                                   const DatasetInfo& data, PreprocessingVariant variant) {
  const auto& entry = registry.preprocessing().get(s.preprocessing_plugin);
  const PreprocessingContext context{variant, data};
  auto made = guarded("preprocessing", s.preprocessing_plugin, [&] { return entry.create(s.preprocessing_params, context); });
  require(made, "preprocessing", s.preprocessing_plugin, "preprocessing");
  const ImageShape shape = made->output_shape();
  if (shape.channels != data.channels || shape.height < 1 || shape.width < 1)
    throw Error("[preprocessing] " + s.preprocessing_plugin + ": its " + to_string(variant) + " variant gives " +
                std::to_string(shape.channels) + "x" + std::to_string(shape.height) + "x" + std::to_string(shape.width) +
                " images from " + std::to_string(data.channels) + "-channel data (a plugin bug)");
  return made;
}

ModelInput model_input(const Preprocessing& preprocessing, const DatasetInfo& data) {
  const ImageShape shape = preprocessing.output_shape();
  return {shape.channels, shape.height, shape.width, data.num_classes};
}

std::shared_ptr<Model> build_model(const Settings& s, const Registry& registry, const ModelInput& input,
                                   const ComputeSetup& compute) {
  const auto& entry = registry.models().get(s.model_plugin);
  auto model = guarded("model", s.model_plugin, [&] { return entry.create(s.model_params, input); });
  require(model, "model", s.model_plugin, "model");
  model->to(compute.device);
  apply_memory_format(*model, compute);
  return model;
}

PluginCallSite plugin_call_site(const Registry& registry, ComponentKind kind, const std::string& name) {
  return {registry.component(kind, name).plugin, std::string(to_string(kind)) + " '" + name + "'"};
}

namespace {

TrainingComponents::CallSites call_sites(const Settings& s, const Registry& registry) {
  TrainingComponents::CallSites sites;
  sites.train_set = sites.test_set = plugin_call_site(registry, ComponentKind::dataset, s.data_plugin);
  sites.train_preprocessing = sites.eval_preprocessing =
      plugin_call_site(registry, ComponentKind::preprocessing, s.preprocessing_plugin);
  sites.model = plugin_call_site(registry, ComponentKind::model, s.model_plugin);
  sites.optimizer = plugin_call_site(registry, ComponentKind::optimizer, s.optimizer.plugin);
  sites.schedule = plugin_call_site(registry, ComponentKind::lr_schedule, s.schedule.plugin);
  sites.compressor = plugin_call_site(registry, ComponentKind::gradient_compression, s.compression.plugin);
  for (const auto& w : s.optimizer.wrappers)
    sites.wrappers.push_back(plugin_call_site(registry, ComponentKind::optimizer_wrapper, w.plugin));
  return sites;
}

}  // namespace

TrainingComponents build_components(const Settings& s, const Registry& registry, const ComputeSetup& compute,
                                    DataEventSink* data_events) {
  TrainingComponents c;
  c.sites = call_sites(s, registry);
  c.train_set = build_train_set(s, registry, data_events);
  if (s.eval.enabled) c.test_set = build_split(s, registry, DatasetSplit::test, data_events);
  const DatasetInfo train_info = c.train_set->info();
  c.train_preprocessing = build_preprocessing(s, registry, train_info, PreprocessingVariant::train);
  c.eval_preprocessing = build_preprocessing(s, registry, c.test_set ? c.test_set->info() : train_info,
                                             PreprocessingVariant::eval);
  const ImageShape train_shape = c.train_preprocessing->output_shape();
  const ImageShape eval_shape = c.eval_preprocessing->output_shape();
  if (train_shape.height != eval_shape.height || train_shape.width != eval_shape.width)
    throw RecipeError("[preprocessing] " + s.preprocessing_plugin + ": the train variant gives " +
                      std::to_string(train_shape.height) + "x" + std::to_string(train_shape.width) +
                      " images but the eval variant " + std::to_string(eval_shape.height) + "x" +
                      std::to_string(eval_shape.width) + ", and one model must take both; give both the same size "
                      "(with none: the same [data] height and width for both splits)");
  c.input = model_input(*c.train_preprocessing, train_info);
  c.model = build_model(s, registry, c.input, compute);
  const auto& model_entry = registry.models().get(s.model_plugin);
  for (const auto& [name, weight] : model_entry.meta.aux_logits) c.aux_weights[name] = s.aux_weight >= 0 ? s.aux_weight : weight;
  c.tensor_records = initialize_from(*c.model, s.checkpoint, model_entry.meta.logits_pattern);
  for (auto& frozen : freeze_parameters(*c.model, s.checkpoint, model_entry.meta.logits_pattern))
    c.tensor_records.push_back(std::move(frozen));
  c.groups = form_parameter_groups(*c.model, s.optimizer);
  build_optimizer_chain(c, s.optimizer, registry,
                        registry.gradient_compressors().get(s.compression.plugin).meta.takes_over_weight_decay);

  // Per rank: every micro-batch step of a data-parallel job takes world_size x batch_size images.
  const std::int64_t batch_size = s.run.batch_size * compute.world_size;
  c.shards = std::make_shared<RankShards>(c.train_set->size(), c.train_set->examples_per_file(), compute.world_size);
  c.micro_batches_per_epoch = c.shards->examples_per_rank() / s.run.batch_size;
  c.updates_per_epoch = c.micro_batches_per_epoch / c.micro_batches_per_update;
  if (c.updates_per_epoch == 0)
    throw Error("[run] batch_size = " + std::to_string(s.run.batch_size) +
                (compute.world_size > 1 ? " x " + std::to_string(compute.world_size) + " ranks" : std::string()) + " x " +
                std::to_string(c.micro_batches_per_update) + " micro-batches per update is larger than the training split (" +
                std::to_string(c.train_set->size()) + " images); lower batch_size or batch_gradients num_batches");
  c.total_updates = run_length_in_updates(s.run.max_steps, s.run.epochs, c.updates_per_epoch);
  c.epochs = (c.total_updates + c.updates_per_epoch - 1) / c.updates_per_epoch;
  c.schedule = build_schedule(s, registry, c.updates_per_epoch, c.total_updates);
  c.compressor = build_compressor(c, s, registry, compute);
  return c;
}

std::vector<PluginRecord> plugins_used(const Settings& s, const Registry& registry) {
  std::vector<std::pair<ComponentKind, std::string>> used{{ComponentKind::dataset, s.data_plugin},
                                                          {ComponentKind::preprocessing, s.preprocessing_plugin},
                                                          {ComponentKind::model, s.model_plugin},
                                                          {ComponentKind::optimizer, s.optimizer.plugin},
                                                          {ComponentKind::lr_schedule, s.schedule.plugin},
                                                          {ComponentKind::gradient_compression, s.compression.plugin}};
  for (const auto& w : s.optimizer.wrappers) used.emplace_back(ComponentKind::optimizer_wrapper, w.plugin);
  for (const auto& h : s.hooks) used.emplace_back(ComponentKind::hook, h.plugin);
  std::vector<PluginRecord> out;
  for (const auto& [kind, name] : used) {
    const std::string& plugin = registry.component(kind, name).plugin;
    for (const auto& loaded : registry.plugins()) {
      if (loaded.name != plugin) continue;
      bool seen = false;
      for (const auto& r : out) seen = seen || r.name == plugin;
      if (!seen) out.push_back({loaded.name, loaded.version, loaded.library_path, sha256_of_file(loaded.library_path)});
    }
  }
  return out;
}

}  // namespace orchestrate
