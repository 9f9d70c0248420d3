#include "engine/recipe/core_settings_tables.h"

#include <filesystem>
#include <regex>

#include "engine/recipe/usable_cores.h"
#include "store/run_store.h"

namespace orchestrate {

namespace {

// The field a key fills, as SettingsTable::key takes it: FIELD(a) or FIELD(a.b).
#define FIELD(member) [](auto& s) -> auto& { return s.member; }

// The problem with a regular expression, or "".
std::string regex_problem(const std::string& pattern) {
  try {
    std::regex compiled(pattern);
    return "";
  } catch (const std::regex_error& e) {
    return "\"" + pattern + "\" is not a valid regular expression (" + e.what() + ")";
  }
}

// GradScaler's defaults and the dimension-reduce seed's, kept by the modules
// that implement them: the recipe keys take theirs.
const LossScalerSettings kScalerDefaults{};
const SubspaceDescentSettings kSearchDefaults{};

}  // namespace

const SettingsTable<RunSettings>& run_keys() {
  static const auto table = [] {
    SettingsTable<RunSettings> t;
    t.key(string_param("name", "", "run name shown in `orchestrate runs`; empty: the recipe file's name")
              .safe_on_resume(), FIELD(name));
    t.key(int_param("seed", 42, "fixes data order, augmentation and weight init").at_least(0), FIELD(seed));
    t.key(string_param("device", "auto", "auto (CUDA when available), cpu or cuda").one_of({"auto", "cpu", "cuda"}),
          FIELD(device));
    t.key(int_param("epochs", 1, "passes over the training split").at_least(1), FIELD(epochs));
    t.key(int_param("max_steps", 0, "stop after this many updates; 0: run all epochs").at_least(0), FIELD(max_steps));
    t.key(int_param("batch_size", 64, "images per micro-batch (per forward/backward pass)").at_least(1),
          FIELD(batch_size));
    t.key(int_param("num_workers", 0,
                    "data pipeline threads; 0 reads batches on the training thread (fastest for in-memory data such "
                    "as Fashion-MNIST on 2 cores); raise it for data that must be decoded")
              .between(0, 64).safe_on_resume(),
          FIELD(num_workers));
    t.key(int_param("prefetch_batches", 4, "batches prepared ahead of the training step").between(1, 1024)
              .safe_on_resume(),
          FIELD(prefetch_batches));
    t.key(int_param("shuffle_buffer_size", 0,
                    "for a dataset read as a stream (tfrecord): draw each example from a buffer of this many, read "
                    "in file order (FastNN's shuffle_buffer_size, TF's Dataset.shuffle); 0: a full random permutation")
              .at_least(0),
          FIELD(shuffle_buffer_size));
    t.key(int_param("cache_mb", 0,
                    "keep decoded examples (before random augmentation) in memory, up to this many MiB per split, "
                    "so later epochs read no files (FastNN's datasets_use_caching); 0: off")
              .at_least(0),
          FIELD(cache_mb));
    t.key(int_param("log_every", 50, "read the loss, record train/* metrics and refresh progress every N updates")
              .at_least(1).safe_on_resume(),
          FIELD(log_every));
    t.key(int_param("threads", 0, "intra-op CPU threads for LibTorch; 0: one per core").between(0, 1024)
              .safe_on_resume(),
          FIELD(threads));
    t.choice(string_param("on_nonfinite", "stop",
                          "a NaN/inf loss: stop (the run fails, naming the step) or skip (the update is dropped, an "
                          "event names it)"),
             FIELD(on_nonfinite), std::vector<std::pair<std::string, NonFinitePolicy>>{{"stop", NonFinitePolicy::stop},
                                                                                       {"skip", NonFinitePolicy::skip}});
    t.choice(string_param("cuda_graph", "off",
                          "on CUDA, auto captures a micro-batch's forward and backward as a CUDA graph after " +
                              std::to_string(kEagerUpdatesBeforeCapture) +
                              " eager updates and replays it, when the run allows it (its events say why not); off "
                              "runs the eager step, the default until the capture has been measured on a GPU")
                 .safe_on_resume(),
             FIELD(cuda_graph), std::vector<std::pair<std::string, CudaGraphMode>>{{"auto", CudaGraphMode::automatic},
                                                                                   {"off", CudaGraphMode::off}});
    t.choice(string_param("data_on_device", "off",
                          "keep the whole training split on the training device and gather each batch there: auto "
                          "on CUDA when the split allows it (no [preprocessing], one image size, within the size "
                          "limit of share/doc/limits.md; its events say why not), on wherever the run is (an error "
                          "when the split does not allow it), or off, the default until it has been measured on a GPU")
                 .safe_on_resume(),
             FIELD(data_on_device),
             std::vector<std::pair<std::string, DataOnDevice>>{
                 {"auto", DataOnDevice::automatic}, {"on", DataOnDevice::on}, {"off", DataOnDevice::off}});
    t.key(bool_param("cudnn_benchmark", true,
                     "on CUDA, time cuDNN's algorithms for each new convolution shape and keep the fastest (as "
                     "torch.backends.cudnn.benchmark; the first steps pay for the timing); false takes cuDNN's "
                     "heuristic choice at once")
              .safe_on_resume(),
          FIELD(cudnn_benchmark));
    t.key(int_param("cudnn_benchmark_limit", 10,
                    "with cudnn_benchmark, time at most this many of cuDNN's candidate algorithms for each new "
                    "convolution shape, in the order of its heuristics (as torch.backends.cudnn.benchmark_limit): "
                    "fewer make the first steps shorter and may miss the fastest; 0: time them all")
              .between(0, 10000).safe_on_resume(),
          FIELD(cudnn_benchmark_limit));
    // More intra-op threads than cores only slows a step (each waits for the
    // others), and a thousand of them under a memory limit hung LibTorch's pool.
    t.rule([](const Params& p) -> std::string {
      const int cores = usable_cores();
      if (p.integer("threads") <= cores) return "";
      return "threads = " + std::to_string(p.integer("threads")) + " is more than the " + std::to_string(cores) +
             " cores this process may use; use 0 (one per core) or at most " + std::to_string(cores);
    });
    return t;
  }();
  return table;
}

const SettingsTable<Settings>& model_keys() {
  static const auto table = [] {
    SettingsTable<Settings> t;
    t.choice(string_param("memory_format", "auto",
                          "tensor layout of images and conv weights: channels_last (NHWC), contiguous (NCHW), or "
                          "auto (channels_last on CUDA; on the CPU it depends on the model)"),
             FIELD(memory_format),
             std::vector<std::pair<std::string, MemoryFormat>>{{"auto", MemoryFormat::automatic},
                                                               {"channels_last", MemoryFormat::channels_last},
                                                               {"contiguous", MemoryFormat::contiguous}});
    return t;
  }();
  return table;
}

const SettingsTable<Settings>& loss_keys() {
  static const auto table = [] {
    SettingsTable<Settings> t;
    t.key(real_param("label_smoothing", 0.0, "cross-entropy label smoothing (the MindSpore seed uses 0.1)")
              .at_least(0)
              .less_than(1),
          FIELD(label_smoothing));
    t.key(real_param("aux_weight", -1.0,
                     "weight of the auxiliary classifiers' loss (Inception's AuxLogits), added in training only; "
                     "-1: the model's declared weight (0.4 for inception_v3)")
              .at_least(-1),
          FIELD(aux_weight));
    return t;
  }();
  return table;
}

const SettingsTable<OptimizerSettings>& optimizer_keys() {
  static const auto table = [] {
    SettingsTable<OptimizerSettings> t;
    t.key(real_param("weight_decay", 0.0,
                     "decay coefficient; applied as each optimizer defines it (L2 in the gradient, or decoupled)")
              .at_least(0),
          FIELD(weight_decay));
    t.key(bool_param("decay_norm_and_bias", false,
                     "also decay 1-D parameters (biases, normalization scales and shifts); false as in the MLPerf "
                     "LARS reference and timm"),
          FIELD(decay_norm_and_bias));
    t.key(string_list_param("no_decay", std::vector<std::string>{},
                            "more parameters without weight decay: regular expressions searched in their names"),
          FIELD(no_decay_patterns));
    t.rule([](const Params& p) {
      for (const auto& pattern : p.string_list("no_decay"))
        if (auto why = regex_problem(pattern); !why.empty()) return "no_decay: " + why;
      return std::string();
    });
    return t;
  }();
  return table;
}

const SettingsTable<ParameterGroupRule>& group_keys() {
  static const auto table = [] {
    SettingsTable<ParameterGroupRule> t;
    t.key(string_param("match", std::nullopt,
                       "regular expression searched in parameter names (e.g. \"^fc\\\\.\"); the first matching group "
                       "wins"),
          FIELD(pattern));
    t.key(real_param("lr_scale", 1.0, "multiplies the lr (and the schedule's lr) for these parameters").at_least(0),
          FIELD(lr_scale));
    t.key(real_param("weight_decay_scale", 1.0, "multiplies [optimizer] weight_decay for these parameters")
              .at_least(0),
          FIELD(weight_decay_scale));
    t.rule([](const Params& p) {
      const std::string why = regex_problem(p.string("match"));
      return why.empty() ? why : "match: " + why;
    });
    return t;
  }();
  return table;
}

const SettingsTable<ScheduleSettings>& schedule_keys() {
  static const auto table = [] {
    SettingsTable<ScheduleSettings> t;
    t.choice(string_param("warmup", "none", "warm-up before the schedule: none, linear or exponential"),
             FIELD(warmup),
             std::vector<std::pair<std::string, WarmupShape>>{{"none", WarmupShape::none},
                                                              {"linear", WarmupShape::linear},
                                                              {"exponential", WarmupShape::exponential}});
    t.key(real_param("warmup_length", 0.0, "warm-up length in warmup_unit; the schedule then starts at its step 0")
              .at_least(0),
          FIELD(warmup_length));
    t.choice(string_param("warmup_unit", "step", "what warmup_length counts"), FIELD(warmup_in_epochs),
             std::vector<std::pair<std::string, bool>>{{"step", false}, {"epoch", true}});
    t.key(real_param("warmup_start_lr", 0.0,
                     "lr at the first warm-up update (absolute); it rises to the schedule's first lr")
              .at_least(0),
          FIELD(warmup_start_lr));
    t.rule([](const Params& p) -> std::string {
      const std::string& kind = p.string("warmup");
      if (kind != "none" && p.real("warmup_length") <= 0) return "warmup = \"" + kind + "\" needs warmup_length > 0";
      if (kind == "exponential" && p.real("warmup_start_lr") <= 0)
        return "warmup = \"exponential\" needs warmup_start_lr > 0 (it multiplies up from there)";
      return "";
    });
    return t;
  }();
  return table;
}

const SettingsTable<PrecisionSettings>& precision_keys() {
  static const auto table = [] {
    SettingsTable<PrecisionSettings> t;
    t.choice(string_param("mode", "fp32",
                          "fp32; bf16 or fp16 autocast (parameters and optimizer state stay fp32, loss and accuracy "
                          "in fp32)"),
             FIELD(mode),
             std::vector<std::pair<std::string, PrecisionMode>>{
                 {"fp32", PrecisionMode::fp32}, {"bf16", PrecisionMode::bf16}, {"fp16", PrecisionMode::fp16}});
    t.choice(string_param("loss_scaling", "dynamic",
                          "fp16 only: dynamic (torch.amp.GradScaler's rule), static (a fixed loss_scale) or off"),
             FIELD(scaler.mode),
             std::vector<std::pair<std::string, LossScaleMode>>{{"dynamic", LossScaleMode::dynamic},
                                                                {"static", LossScaleMode::fixed},
                                                                {"off", LossScaleMode::off}});
    t.key(real_param("loss_scale", kScalerDefaults.scale,
                     "the static scale (the seeds use 1024), or the initial dynamic one (GradScaler's init_scale)")
              .greater_than(0),
          FIELD(scaler.scale));
    t.key(real_param("growth_factor", kScalerDefaults.growth_factor,
                     "dynamic: scale multiplier after growth_interval finite updates")
              .greater_than(1),
          FIELD(scaler.growth_factor));
    t.key(real_param("backoff_factor", kScalerDefaults.backoff_factor,
                     "dynamic: scale multiplier after an update with inf/nan gradients")
              .greater_than(0)
              .less_than(1),
          FIELD(scaler.backoff_factor));
    t.key(int_param("growth_interval", kScalerDefaults.growth_interval,
                    "dynamic: finite updates in a row before the scale grows")
              .at_least(1),
          FIELD(scaler.growth_interval));
    return t;
  }();
  return table;
}

const SettingsTable<EvalSettings>& eval_keys() {
  static const auto table = [] {
    SettingsTable<EvalSettings> t;
    t.every_key_safe_on_resume();  // outside the training trajectory
    t.key(bool_param("enabled", true, "evaluate on the test split"), FIELD(enabled));
    t.key(int_param("every_epochs", 1, "evaluate after every N epochs (and always at the end); 0: only at the end")
              .at_least(0),
          FIELD(every_epochs));
    t.key(int_param("batch_size", 1000, "images per evaluation batch").at_least(1), FIELD(batch_size));
    return t;
  }();
  return table;
}

const SettingsTable<Settings>& log_keys() {
  static const auto table = [] {
    SettingsTable<Settings> t;
    t.every_key_safe_on_resume();  // outside the training trajectory
    t.key(string_param("db", "",
                       std::string("SQLite run store, used when neither --db nor $ORCHESTRATE_DB gives one; empty: ./") +
                           RunStore::kDefaultFile),
          FIELD(db));
    t.key(string_param("progress", "auto",
                       "progress line: auto (redrawn on a terminal, one line per log_every otherwise), always "
                       "(redrawn even off a terminal) or never")
              .one_of({"auto", "always", "never"}),
          FIELD(progress));
    t.key(real_param("flush_secs", 10.0,
                     "step rows reach the run store at least this often, so a killed run loses at most this window; "
                     "train/* log points stay every log_every updates")
              .greater_than(0)
              .at_most(86400),
          FIELD(flush_seconds));
    t.key(string_param("tensorboard", "",
                       "write TensorBoard event files while the run trains, in DIR/<id>-<name> (every metric, the "
                       "learning rate, images/s and the step-time shares at each log point); empty: none"),
          FIELD(tensorboard));
    return t;
  }();
  return table;
}

const SettingsTable<CheckpointSettings>& checkpoint_keys() {
  static const auto table = [] {
    SettingsTable<CheckpointSettings> t;
    t.key(string_param("dir", "", "where checkpoints go; empty: checkpoints/<store file>/run-<id> beside the run store")
              .safe_on_resume(),
          FIELD(dir));
    t.key(int_param("every_steps", 0, "save every N updates; 0: off").at_least(0).safe_on_resume(), FIELD(every_steps));
    t.key(int_param("every_epochs", 1, "save after every N epochs (after their evaluation); 0: off").at_least(0)
              .safe_on_resume(),
          FIELD(every_epochs));
    t.key(real_param("save_interval_secs", 0.0, "save when this many seconds passed since the last save; 0: off")
              .at_least(0).safe_on_resume(),
          FIELD(save_interval_secs));
    t.key(int_param("keep_max", 3, "keep the newest N checkpoints of the run; 0: keep all").at_least(0)
              .safe_on_resume(),
          FIELD(keep_max));
    t.key(bool_param("at_end", true, "save when training ends").safe_on_resume(), FIELD(at_end));
    t.key(bool_param("on_signal", true, "save when SIGINT/SIGTERM stops the run, so --resume continues it")
              .safe_on_resume(),
          FIELD(on_signal));
    t.key(string_param("init_from", "",
                       "start from these weights: an orchestrate checkpoint directory or a .safetensors file")
              .safe_on_resume(),
          FIELD(init_from));
    t.key(string_list_param("exclude", std::vector<std::string>{},
                            "init_from: glob patterns of tensors not to load; \"@logits\" is the model's classifier "
                            "head").safe_on_resume(),
          FIELD(exclude));
    t.key(bool_param("strict", true,
                     "init_from: missing, unexpected or mismatched tensors are errors; false: recorded warnings")
              .safe_on_resume(),
          FIELD(strict));
    t.key(string_list_param("trainable", std::vector<std::string>{},
                            "glob patterns of the only parameters to train; the rest are frozen"),
          FIELD(trainable));
    t.key(string_list_param("frozen", std::vector<std::string>{},
                            "glob patterns of parameters to freeze (no gradient, no optimizer state)"),
          FIELD(frozen));
    t.rule([](const Params& p) -> std::string {
      if (!p.string_list("trainable").empty() && !p.string_list("frozen").empty())
        return "set trainable or frozen, not both";
      if (!p.string_list("exclude").empty() && p.string("init_from").empty())
        return "exclude applies to init_from, which is not set";
      std::error_code error;
      if (const auto& from = p.string("init_from"); !from.empty() && !std::filesystem::exists(from, error))
        return "init_from = \"" + from +
               "\" does not exist; give an orchestrate checkpoint directory or a .safetensors file "
               "(scripts/pth_to_safetensors converts a PyTorch state_dict)";
      return "";
    });
    return t;
  }();
  return table;
}

const SettingsTable<ExportSettings>& export_keys() {
  static const auto table = [] {
    SettingsTable<ExportSettings> t;
    t.every_key_safe_on_resume();  // outside the training trajectory
    t.key(string_param("dir", "",
                       "when training ends, export the model for serving into this model repository "
                       "(Triton layout: <dir>/<name>/<version>/model.pt); empty: no export"),
          FIELD(dir));
    t.key(string_param("name", "", "the model's directory in the repository; empty: the run name"), FIELD(name));
    t.key(int_param("top_k", 5, "the served model returns the k most likely classes and their confidences")
              .at_least(1),
          FIELD(top_k));
    t.key(int_param("max_batch_size", 64, "the largest batch the server may send (config.pbtxt)").at_least(1),
          FIELD(max_batch_size));
    return t;
  }();
  return table;
}

const SettingsTable<DistributedSettings>& distributed_keys() {
  static const auto table = [] {
    SettingsTable<DistributedSettings> t;
    t.every_key_safe_on_resume();  // outside the training trajectory
    t.key(string_param("backend", "auto",
                       "the collective engine: auto (NCCL on CUDA, Gloo on the CPU), gloo or nccl")
              .one_of({"auto", "gloo", "nccl"}),
          FIELD(backend));
    t.key(real_param("bucket_size_mb", 25.0,
                     "gradients are all-reduced in buckets of about this size, each started as soon as backward "
                     "has filled it (MindSpore's all-reduce fusion groups)")
              .greater_than(0)
              .at_most(4096),
          FIELD(bucket_size_mb));
    t.key(real_param("timeout_s", 60.0,
                     "how long a rendezvous or a collective waits for the other workers before the run fails; a "
                     "dead or hung worker ends the job within this time")
              .greater_than(0)
              .at_most(86400),
          FIELD(timeout_s));
    return t;
  }();
  return table;
}

const SettingsTable<SnapshotSettings>& snapshots_keys() {
  static const auto table = [] {
    SettingsTable<SnapshotSettings> t;
    t.every_key_safe_on_resume();  // outside the training trajectory
    t.key(string_param("dir", "", "where the snapshots go; empty: snapshots/<store file>/run-<id> beside the run store"),
          FIELD(dir));
    t.key(int_param("every_steps", 0, "save the trainable weights every N updates; 0: off").at_least(0),
          FIELD(policy.every_steps));
    t.key(int_param("every_epochs", 0, "save the trainable weights after every N epochs; 0: off").at_least(0),
          FIELD(policy.every_epochs));
    t.key(int_param("from_epoch", 1,
                    "the first (1-based) epoch that saves: the earliest weights are far from where training settles")
              .at_least(1),
          FIELD(policy.from_epoch));
    t.key(int_param("keep", 40, "keep the newest N snapshots; 0: all").at_least(0), FIELD(policy.keep));
    return t;
  }();
  return table;
}

const SettingsTable<DimReduceSettings>& dim_reduce_keys() {
  static const auto table = [] {
    SettingsTable<DimReduceSettings> t;
    t.key(bool_param("enabled", false,
                     "train in the span of the PCA of stage 1's weight snapshots (MindSpore Boost's dimension-reduce "
                     "stage 2); each update is a quasi-Newton step with a line search there, not the optimizer's"),
          FIELD(enabled));
    t.key(string_param("snapshots", "",
                       "stage 1's snapshot directory ([snapshots] of that run); empty with from_epoch > 1: this "
                       "run's own"),
          FIELD(snapshots));
    t.key(int_param("from_epoch", 1,
                    "the epoch stage 2 starts at: 1 trains all of this run in the subspace (from stage 1's weights, "
                    "[checkpoint] init_from); E > 1 trains epochs 1..E-1 as stage 1, saving [snapshots], then "
                    "computes the PCA of its own snapshots and trains the rest as stage 2: both stages in one run")
              .at_least(1),
          FIELD(from_epoch));
    t.key(string_param("pca_mat_path", "",
                       "the PCA matrix (.safetensors): loaded when it exists, else computed from the snapshots and "
                       "saved here; empty: artifacts/<store file>/run-<id>/pca_mat.safetensors beside the run store"),
          FIELD(pca_mat_path));
    t.key(int_param("n_components", 32, "the subspace's dimension; needs more snapshots than this").between(1, 4096),
          FIELD(n_components));
    t.key(real_param("rho", kSearchDefaults.rho, "the line search tries steps 1, rho and rho^2")
              .greater_than(0)
              .less_than(1),
          FIELD(search.rho));
    t.key(real_param("gamma", kSearchDefaults.gamma, "momentum of the gradient left outside the subspace")
              .at_least(0)
              .less_than(1),
          FIELD(search.gamma));
    t.key(real_param("alpha", kSearchDefaults.alpha, "step along that momentum").at_least(0), FIELD(search.alpha));
    t.key(real_param("sigma", kSearchDefaults.sigma,
                     "sufficient decrease: a trial step must lower the loss by sigma x the predicted decrease")
              .greater_than(0)
              .less_than(1),
          FIELD(search.sigma));
    t.key(int_param("line_search_steps", kSearchDefaults.max_search,
                    "trial steps 1, rho, ..., rho^(N-1); when none lowers the loss enough, rule = \"mindspore\" "
                    "takes the last, \"safeguarded\" none (the seed's 3; more suit a subspace whose curvature is far "
                    "from 1)")
              .between(1, 60),
          FIELD(search.max_search));
    t.choice(string_param("rule", kSearchDefaults.safeguarded ? "safeguarded" : "mindspore",
                          "mindspore: the seed's update as written (it diverged on Fashion-MNIST); safeguarded: "
                          "curvature pairs only at a clear angle, and no subspace step plus a reset of B when no "
                          "trial passes"),
             FIELD(search.safeguarded), std::vector<std::pair<std::string, bool>>{{"safeguarded", true},
                                                                                 {"mindspore", false}});
    t.rule([](const Params& p) -> std::string {
      if (!p.boolean("enabled") || p.integer("from_epoch") > 1) return "";  // both stages: [snapshots] is checked
      if (p.string("snapshots").empty() && p.string("pca_mat_path").empty())
        return "enabled needs snapshots (stage 1's snapshot directory) or pca_mat_path (a saved PCA matrix)";
      std::error_code error;
      if (const auto& pca = p.string("pca_mat_path");
          p.string("snapshots").empty() && !std::filesystem::exists(pca, error))
        return "pca_mat_path = \"" + pca +
               "\" does not exist and snapshots is empty: give stage 1's snapshots to compute it";
      return "";
    });
    return t;
  }();
  return table;
}

}  // namespace orchestrate
