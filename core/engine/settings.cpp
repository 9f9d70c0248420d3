#include "settings.h"

#include "orchestrate/error.h"

namespace orchestrate {

namespace {

RunSettings run_settings(const Params& p) {
  RunSettings s;
  s.name = p.string("name");
  s.seed = static_cast<std::uint64_t>(p.integer("seed"));
  s.device = p.string("device");
  s.epochs = p.integer("epochs");
  s.max_steps = p.integer("max_steps");
  s.batch_size = p.integer("batch_size");
  s.num_workers = static_cast<int>(p.integer("num_workers"));
  s.prefetch_batches = static_cast<int>(p.integer("prefetch_batches"));
  s.shuffle_buffer_size = p.integer("shuffle_buffer_size");
  s.cache_mb = p.integer("cache_mb");
  s.log_every = p.integer("log_every");
  s.threads = static_cast<int>(p.integer("threads"));
  s.on_nonfinite = p.string("on_nonfinite") == "skip" ? NonFinitePolicy::skip : NonFinitePolicy::stop;
  return s;
}

OptimizerSettings optimizer_settings(const TableValues& t) {
  OptimizerSettings s;
  s.plugin = t.plugin;
  s.params = t.component;
  s.base_lr = t.component.real("lr");
  s.weight_decay = t.core.real("weight_decay");
  s.decay_norm_and_bias = t.core.boolean("decay_norm_and_bias");
  s.no_decay_patterns = t.core.string_list("no_decay");
  for (const auto& pattern : s.no_decay_patterns) s.no_decay.emplace_back(pattern);
  for (const auto& group : t.list("groups"))
    s.groups.push_back({group.core.string("match"), std::regex(group.core.string("match")),
                        group.core.real("lr_scale"), group.core.real("weight_decay_scale")});
  for (const auto& wrapper : t.list("wrappers")) s.wrappers.push_back({wrapper.plugin, wrapper.component});
  return s;
}

ScheduleSettings schedule_settings(const TableValues& t) {
  ScheduleSettings s;
  s.plugin = t.plugin;
  s.params = t.component;
  const std::string& shape = t.core.string("warmup");
  s.warmup = shape == "linear" ? WarmupShape::linear : shape == "exponential" ? WarmupShape::exponential
                                                                              : WarmupShape::none;
  s.warmup_length = t.core.real("warmup_length");
  s.warmup_in_epochs = t.core.string("warmup_unit") == "epoch";
  s.warmup_start_lr = t.core.real("warmup_start_lr");
  return s;
}

PrecisionSettings precision_settings(const Params& p) {
  PrecisionSettings s;
  s.mode = parse_precision_mode(p.string("mode"));
  // Loss scaling exists for fp16's narrow exponent range; bf16 and fp32 need none.
  s.scaler.mode = s.mode == PrecisionMode::fp16 ? parse_loss_scale_mode(p.string("loss_scaling")) : LossScaleMode::off;
  s.scaler.loss_scale = p.real("loss_scale");
  s.scaler.init_scale = p.real("loss_scale");
  s.scaler.growth_factor = p.real("growth_factor");
  s.scaler.backoff_factor = p.real("backoff_factor");
  s.scaler.growth_interval = p.integer("growth_interval");
  return s;
}

CheckpointSettings checkpoint_settings(const Params& p) {
  CheckpointSettings s;
  s.dir = p.string("dir");
  s.every_steps = p.integer("every_steps");
  s.every_epochs = p.integer("every_epochs");
  s.every_seconds = p.real("save_interval_secs");
  s.keep_max = p.integer("keep_max");
  s.at_end = p.boolean("at_end");
  s.on_signal = p.boolean("on_signal");
  s.init_from = p.string("init_from");
  s.exclude = p.string_list("exclude");
  s.strict = p.boolean("strict");
  s.trainable = p.string_list("trainable");
  s.frozen = p.string_list("frozen");
  return s;
}

SnapshotSettings snapshot_settings(const Params& p) {
  SnapshotSettings s;
  s.dir = p.string("dir");
  s.policy = {p.integer("every_steps"), p.integer("every_epochs"), p.integer("from_epoch"), p.integer("keep")};
  return s;
}

DimReduceSettings dim_reduce_settings(const Params& p) {
  DimReduceSettings s;
  s.enabled = p.boolean("enabled");
  s.snapshots = p.string("snapshots");
  s.from_epoch = p.integer("from_epoch");
  s.pca_mat_path = p.string("pca_mat_path");
  s.n_components = p.integer("n_components");
  s.search.rho = p.real("rho");
  s.search.gamma = p.real("gamma");
  s.search.alpha = p.real("alpha");
  s.search.sigma = p.real("sigma");
  s.search.max_search = static_cast<int>(p.integer("line_search_steps"));
  s.search.safeguarded = p.string("rule") == "safeguarded";
  return s;
}

// Stage 2 takes each update itself, from one batch's gradient and losses:
// what changes the update elsewhere in the recipe cannot apply to it.
void check_dim_reduce(const Settings& s, const std::string& recipe_path) {
  if (!s.dim_reduce.enabled) return;
  const std::string where = recipe_path + ": [dim_reduce] enabled = true: ";
  if (!s.optimizer.wrappers.empty())
    throw RecipeError(where + "the update is dim_reduce's own, so [[optimizer.wrappers]] (" +
                      s.optimizer.wrappers.front().plugin + ") would not apply; remove them for stage 2");
  if (s.precision.mode == PrecisionMode::fp16)
    throw RecipeError(where + "fp16 loss scaling is not supported in stage 2; set [precision] mode = \"bf16\" or \"fp32\"");
  if (s.compression.plugin != "none")
    throw RecipeError(where + "gradient compression (" + s.compression.plugin +
                      ") is not supported in stage 2; remove [gradient_compression]");
  if (s.dim_reduce.from_epoch > 1) {
    const std::string both = recipe_path + ": [dim_reduce] from_epoch = " + std::to_string(s.dim_reduce.from_epoch);
    if (s.dim_reduce.from_epoch > s.run.epochs)
      throw RecipeError(both + " is after the last epoch ([run] epochs = " + std::to_string(s.run.epochs) +
                        "); stage 2 would never start: raise [run] epochs or lower from_epoch");
    if (s.dim_reduce.snapshots.empty() && !s.snapshots.policy.enabled())
      throw RecipeError(both + " computes its PCA from this run's stage-1 snapshots, and [snapshots] saves none; "
                        "set [snapshots] every_steps or every_epochs (and from_epoch before " +
                        std::to_string(s.dim_reduce.from_epoch) + ")");
    if (s.dim_reduce.snapshots.empty() && s.snapshots.policy.from_epoch >= s.dim_reduce.from_epoch)
      throw RecipeError(both + " but [snapshots] from_epoch = " + std::to_string(s.snapshots.policy.from_epoch) +
                        ": stage 1 would save no snapshot before stage 2 starts; set [snapshots] from_epoch below " +
                        std::to_string(s.dim_reduce.from_epoch));
  }
}

}  // namespace

Settings settings_of(const Recipe& recipe) {
  Settings s;
  s.run = run_settings(recipe.table("run").core);
  if (s.run.name.empty()) s.run.name = recipe.run_name();
  s.data_plugin = recipe.table("data").plugin;
  s.data_params = recipe.table("data").component;
  s.preprocessing_plugin = recipe.table("preprocessing").plugin;
  s.preprocessing_params = recipe.table("preprocessing").component;
  const auto& model = recipe.table("model");
  s.model_plugin = model.plugin;
  s.model_params = model.component;
  const std::string& format = model.core.string("memory_format");
  s.memory_format = format == "channels_last" ? MemoryFormat::channels_last
                    : format == "contiguous"  ? MemoryFormat::contiguous
                                              : MemoryFormat::automatic;
  s.label_smoothing = recipe.table("loss").core.real("label_smoothing");
  s.aux_weight = recipe.table("loss").core.real("aux_weight");
  s.optimizer = optimizer_settings(recipe.table("optimizer"));
  s.schedule = schedule_settings(recipe.table("schedule"));
  s.precision = precision_settings(recipe.table("precision").core);
  const auto& eval = recipe.table("eval").core;
  s.eval = {eval.boolean("enabled"), eval.integer("every_epochs"), eval.integer("batch_size")};
  s.checkpoint = checkpoint_settings(recipe.table("checkpoint").core);
  const auto& exporting = recipe.table("export").core;
  s.export_ = {exporting.string("dir"), exporting.string("name"), exporting.integer("top_k"),
               exporting.integer("max_batch_size")};
  const auto& distributed = recipe.table("distributed").core;
  s.distributed = {distributed.string("backend"), distributed.real("bucket_size_mb"), distributed.real("timeout_s")};
  for (const auto& hook : recipe.table("hooks").list("hooks")) s.hooks.push_back({hook.plugin, hook.component});
  const auto& compression = recipe.table("gradient_compression");
  s.compression = {compression.plugin, compression.component};
  s.snapshots = snapshot_settings(recipe.table("snapshots").core);
  s.dim_reduce = dim_reduce_settings(recipe.table("dim_reduce").core);
  check_dim_reduce(s, recipe.path);
  s.db = recipe.table("log").core.string("db");
  s.progress = recipe.table("log").core.string("progress");
  s.flush_seconds = recipe.table("log").core.real("flush_secs");
  return s;
}

}  // namespace orchestrate
