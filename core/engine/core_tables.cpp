#include "core_tables.h"

#include <filesystem>
#include <regex>

#include "orchestrate/optimizer_wrapper.h"
#include "recipe.h"
#include "usable_cores.h"

namespace orchestrate {

namespace {

// The problem with a regular expression, or "".
std::string regex_problem(const std::string& pattern) {
  try {
    std::regex compiled(pattern);
    return "";
  } catch (const std::regex_error& e) {
    return "\"" + pattern + "\" is not a valid regular expression (" + e.what() + ")";
  }
}

// The order rules each wrapper declares (WrapperRules), checked over the chain.
std::vector<std::pair<std::size_t, std::string>> wrapper_chain_problems(const std::vector<TableValues>& chain,
                                                                        const Registry& registry) {
  std::vector<std::pair<std::size_t, std::string>> out;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    if (chain[i].plugin.empty()) continue;  // already reported
    const auto& rules = registry.optimizer_wrappers().get(chain[i].plugin).meta;
    const std::string& name = chain[i].plugin;
    for (std::size_t j = 0; j < i; ++j)
      if (chain[j].plugin == name) out.emplace_back(i, "'" + name + "' is already entry " + std::to_string(j) +
                                                           "; each wrapper may appear once");
    if (rules.must_come_first && i != 0)
      out.emplace_back(i, "'" + name + "' must be the first wrapper (it accumulates the raw micro-batch "
                              "gradients every other wrapper then sees); move it to entry 0");
    if (rules.must_come_last && i + 1 != chain.size())
      out.emplace_back(i, "'" + name + "' must be the last wrapper (it acts on the update the base optimizer "
                              "makes); move it to the end");
    if (!rules.exclusive_group.empty())
      for (std::size_t j = 0; j < i; ++j) {
        if (chain[j].plugin.empty() || chain[j].plugin == name) continue;
        if (registry.optimizer_wrappers().get(chain[j].plugin).meta.exclusive_group == rules.exclusive_group)
          out.emplace_back(i, "'" + name + "' cannot be combined with '" + chain[j].plugin + "' (entry " +
                                  std::to_string(j) + "): both set a " + rules.exclusive_group + "; keep one");
      }
  }
  return out;
}

ParamSchema run_schema() {
  ParamSchema schema{
      string_param("name", "", "run name shown in `orchestrate runs`; empty: the recipe file's name"),
      int_param("seed", 42, "fixes data order, augmentation and weight init").at_least(0),
      string_param("device", "auto", "auto (CUDA when available), cpu or cuda").one_of({"auto", "cpu", "cuda"}),
      int_param("epochs", 1, "passes over the training split").at_least(1),
      int_param("max_steps", 0, "stop after this many updates; 0: run all epochs").at_least(0),
      int_param("batch_size", 64, "images per micro-batch (per forward/backward pass)").at_least(1),
      int_param("num_workers", 0,
                "data pipeline threads; 0 reads batches on the training thread (fastest for in-memory data such as "
                "Fashion-MNIST on 2 cores); raise it for data that must be decoded")
          .between(0, 64),
      int_param("prefetch_batches", 4, "batches prepared ahead of the training step").between(1, 1024),
      int_param("shuffle_buffer_size", 0,
                "for a dataset read as a stream (tfrecord): draw each example from a buffer of this many, read in "
                "file order (FastNN's shuffle_buffer_size, TF's Dataset.shuffle); 0: a full random permutation")
          .at_least(0),
      int_param("cache_mb", 0,
                "keep decoded examples (before random augmentation) in memory, up to this many MiB per split, so "
                "later epochs read no files (FastNN's datasets_use_caching); 0: off")
          .at_least(0),
      int_param("log_every", 50, "read the loss, record train/* metrics and refresh progress every N updates")
          .at_least(1),
      int_param("threads", 0, "intra-op CPU threads for LibTorch; 0: one per core")
          .between(0, 1024),
      string_param("on_nonfinite", "stop",
                   "a NaN/inf loss: stop (the run fails, naming the step) or skip (the update is dropped, an event "
                   "names it)")
          .one_of({"stop", "skip"}),
  };
  // More intra-op threads than cores only slows a step (each waits for the
  // others), and a thousand of them under a memory limit hung LibTorch's pool.
  schema.rule([](const Params& p) -> std::string {
    const int cores = usable_cores();
    if (p.integer("threads") <= cores) return "";
    return "threads = " + std::to_string(p.integer("threads")) + " is more than the " + std::to_string(cores) +
           " cores this process may use; use 0 (one per core) or at most " + std::to_string(cores);
  });
  return schema;
}

// [data]'s own key beside the dataset's: a recipe that reads data the user
// provides says which, so an error about [data] (a missing directory) says
// what to get and how to make it.
ParamSchema data_schema() {
  return {
      string_param("expects", "",
                   "what data this recipe expects and how to make it; shown with any error about [data]"),
  };
}

ParamSchema model_schema() {
  return {
      string_param("memory_format", "auto",
                   "tensor layout of images and conv weights: channels_last (NHWC), contiguous (NCHW), or auto "
                   "(channels_last on CUDA)")
          .one_of({"auto", "channels_last", "contiguous"}),
  };
}

ParamSchema optimizer_schema() {
  ParamSchema schema{
      real_param("weight_decay", 0.0,
                 "decay coefficient; applied as each optimizer defines it (L2 in the gradient, or decoupled)")
          .at_least(0),
      bool_param("decay_norm_and_bias", false,
                 "also decay 1-D parameters (biases, normalization scales and shifts); false as in the MLPerf LARS "
                 "reference and timm"),
      string_list_param("no_decay", std::vector<std::string>{},
                        "more parameters without weight decay: regular expressions searched in their names"),
  };
  schema.rule([](const Params& p) {
    for (const auto& pattern : p.string_list("no_decay"))
      if (auto why = regex_problem(pattern); !why.empty()) return "no_decay: " + why;
    return std::string();
  });
  return schema;
}

ParamSchema group_schema() {
  ParamSchema schema{
      string_param("match", std::nullopt,
                   "regular expression searched in parameter names (e.g. \"^fc\\\\.\"); the first matching group wins"),
      real_param("lr_scale", 1.0, "multiplies the lr (and the schedule's lr) for these parameters").at_least(0),
      real_param("weight_decay_scale", 1.0, "multiplies [optimizer] weight_decay for these parameters").at_least(0),
  };
  schema.rule([](const Params& p) {
    const std::string why = regex_problem(p.string("match"));
    return why.empty() ? why : "match: " + why;
  });
  return schema;
}

ParamSchema schedule_schema() {
  ParamSchema schema{
      string_param("warmup", "none", "warm-up before the schedule: none, linear or exponential")
          .one_of({"none", "linear", "exponential"}),
      real_param("warmup_length", 0.0, "warm-up length in warmup_unit; the schedule then starts at its step 0")
          .at_least(0),
      string_param("warmup_unit", "step", "what warmup_length counts").one_of({"step", "epoch"}),
      real_param("warmup_start_lr", 0.0, "lr at the first warm-up update (absolute); it rises to the schedule's first lr")
          .at_least(0),
  };
  schema.rule([](const Params& p) -> std::string {
    const std::string& kind = p.string("warmup");
    if (kind != "none" && p.real("warmup_length") <= 0)
      return "warmup = \"" + kind + "\" needs warmup_length > 0";
    if (kind == "exponential" && p.real("warmup_start_lr") <= 0)
      return "warmup = \"exponential\" needs warmup_start_lr > 0 (it multiplies up from there)";
    return "";
  });
  return schema;
}

ParamSchema loss_schema() {
  return {
      real_param("label_smoothing", 0.0, "cross-entropy label smoothing (the MindSpore seed uses 0.1)")
          .at_least(0)
          .less_than(1),
      real_param("aux_weight", -1.0,
                 "weight of the auxiliary classifiers' loss (Inception's AuxLogits), added in training only; "
                 "-1: the model's declared weight (0.4 for inception_v3)")
          .at_least(-1),
  };
}

ParamSchema precision_schema() {
  return {
      string_param("mode", "fp32",
                   "fp32; bf16 or fp16 autocast (parameters and optimizer state stay fp32, loss and accuracy in fp32)")
          .one_of({"fp32", "bf16", "fp16"}),
      string_param("loss_scaling", "dynamic",
                   "fp16 only: dynamic (torch.amp.GradScaler's rule), static (a fixed loss_scale) or off")
          .one_of({"dynamic", "static", "off"}),
      real_param("loss_scale", 65536.0, "the static scale (the seeds use 1024), or the initial dynamic one")
          .greater_than(0),
      real_param("growth_factor", 2.0, "dynamic: scale multiplier after growth_interval finite updates")
          .greater_than(1),
      real_param("backoff_factor", 0.5, "dynamic: scale multiplier after an update with inf/nan gradients")
          .greater_than(0)
          .less_than(1),
      int_param("growth_interval", 2000, "dynamic: finite updates in a row before the scale grows").at_least(1),
  };
}

ParamSchema eval_schema() {
  return {
      bool_param("enabled", true, "evaluate on the test split"),
      int_param("every_epochs", 1, "evaluate after every N epochs (and always at the end); 0: only at the end")
          .at_least(0),
      int_param("batch_size", 1000, "images per evaluation batch").at_least(1),
  };
}

ParamSchema log_schema() {
  return {
      string_param("db", "", "SQLite run store; empty: --db, then $ORCHESTRATE_DB, then ./orchestrate.db"),
      string_param("progress", "auto",
                   "progress line: auto (redrawn on a terminal, one line per log_every otherwise), always or never")
          .one_of({"auto", "always", "never"}),
      real_param("flush_secs", 10.0,
                 "step rows reach the run store at least this often, so a killed run loses at most this window")
          .greater_than(0)
          .at_most(86400),
  };
}

ParamSchema checkpoint_schema() {
  ParamSchema schema{
      string_param("dir", "",
                   "where checkpoints go; empty: checkpoints/run-<id> beside the run store"),
      int_param("every_steps", 0, "save every N updates; 0: off").at_least(0),
      int_param("every_epochs", 1, "save after every N epochs (after their evaluation); 0: off").at_least(0),
      real_param("save_interval_secs", 0.0, "save when this many seconds passed since the last save; 0: off")
          .at_least(0),
      int_param("keep_max", 3, "keep the newest N checkpoints of the run; 0: keep all").at_least(0),
      bool_param("at_end", true, "save when training ends"),
      bool_param("on_signal", true, "save when SIGINT/SIGTERM stops the run, so --resume continues it"),
      string_param("init_from", "",
                   "start from these weights: an orchestrate checkpoint directory or a .safetensors file"),
      string_list_param("exclude", std::vector<std::string>{},
                        "init_from: glob patterns of tensors not to load; \"@logits\" is the model's classifier head"),
      bool_param("strict", true,
                 "init_from: missing, unexpected or mismatched tensors are errors; false: recorded warnings"),
      string_list_param("trainable", std::vector<std::string>{},
                        "glob patterns of the only parameters to train; the rest are frozen"),
      string_list_param("frozen", std::vector<std::string>{},
                        "glob patterns of parameters to freeze (no gradient, no optimizer state)"),
  };
  schema.rule([](const Params& p) -> std::string {
    if (!p.string_list("trainable").empty() && !p.string_list("frozen").empty())
      return "set trainable or frozen, not both";
    if (!p.string_list("exclude").empty() && p.string("init_from").empty())
      return "exclude applies to init_from, which is not set";
    std::error_code error;
    if (const auto& from = p.string("init_from"); !from.empty() && !std::filesystem::exists(from, error))
      return "init_from = \"" + from + "\" does not exist; give an orchestrate checkpoint directory or a .safetensors file "
             "(scripts/pth_to_safetensors converts a PyTorch state_dict)";
    return "";
  });
  return schema;
}

ParamSchema export_schema() {
  return {
      string_param("dir", "",
                   "when training ends, export the model for serving into this model repository "
                   "(Triton layout: <dir>/<name>/<version>/model.pt); empty: no export"),
      string_param("name", "", "the model's directory in the repository; empty: the run name"),
      int_param("top_k", 5, "the served model returns the k most likely classes and their confidences").at_least(1),
      int_param("max_batch_size", 64, "the largest batch the server may send (config.pbtxt)").at_least(1),
  };
}

ParamSchema snapshots_schema() {
  return {
      string_param("dir", "", "where the snapshots go; empty: snapshots/run-<id> beside the run store"),
      int_param("every_steps", 0, "save the trainable weights every N updates; 0: off").at_least(0),
      int_param("every_epochs", 0, "save the trainable weights after every N epochs; 0: off").at_least(0),
      int_param("from_epoch", 1,
                "the first (1-based) epoch that saves: the earliest weights are far from where training settles")
          .at_least(1),
      int_param("keep", 40, "keep the newest N snapshots; 0: all").at_least(0),
  };
}

ParamSchema dim_reduce_schema() {
  ParamSchema schema{
      bool_param("enabled", false,
                 "train in the span of the PCA of stage 1's weight snapshots (MindSpore Boost's dimension-reduce "
                 "stage 2); each update is a quasi-Newton step with a line search there, not the optimizer's"),
      string_param("snapshots", "",
                   "stage 1's snapshot directory ([snapshots] of that run); empty with from_epoch > 1: this run's own"),
      int_param("from_epoch", 1,
                "the epoch stage 2 starts at: 1 trains all of this run in the subspace (from stage 1's weights, "
                "[checkpoint] init_from); E > 1 trains epochs 1..E-1 as stage 1, saving [snapshots], then computes "
                "the PCA of its own snapshots and trains the rest as stage 2: both stages in one run")
          .at_least(1),
      string_param("pca_mat_path", "",
                   "the PCA matrix (.safetensors): loaded when it exists, else computed from the snapshots and "
                   "saved here; empty: artifacts/run-<id>/pca_mat.safetensors beside the run store"),
      int_param("n_components", 32, "the subspace's dimension; needs more snapshots than this").between(1, 4096),
      real_param("rho", 0.55, "the line search tries steps 1, rho and rho^2").greater_than(0).less_than(1),
      real_param("gamma", 0.9, "momentum of the gradient left outside the subspace").at_least(0).less_than(1),
      real_param("alpha", 0.001, "step along that momentum").at_least(0),
      real_param("sigma", 0.4, "sufficient decrease: a trial step must lower the loss by sigma x the predicted decrease")
          .greater_than(0)
          .less_than(1),
      int_param("line_search_steps", 3,
                "trial steps 1, rho, ..., rho^(N-1); when none lowers the loss enough, rule = \"mindspore\" takes the "
                "last, \"safeguarded\" none (the seed's 3; more suit a subspace whose curvature is far from 1)")
          .between(1, 60),
      string_param("rule", "safeguarded",
                   "mindspore: the seed's update as written (it diverged on Fashion-MNIST); safeguarded: curvature "
                   "pairs only at a clear angle, and no subspace step plus a reset of B when no trial passes")
          .one_of({"safeguarded", "mindspore"}),
  };
  schema.rule([](const Params& p) -> std::string {
    if (!p.boolean("enabled") || p.integer("from_epoch") > 1) return "";  // both stages: [snapshots] is checked
    if (p.string("snapshots").empty() && p.string("pca_mat_path").empty())
      return "enabled needs snapshots (stage 1's snapshot directory) or pca_mat_path (a saved PCA matrix)";
    std::error_code error;
    if (const auto& pca = p.string("pca_mat_path");
        p.string("snapshots").empty() && !std::filesystem::exists(pca, error))
      return "pca_mat_path = \"" + pca + "\" does not exist and snapshots is empty: give stage 1's snapshots to compute it";
    return "";
  });
  return schema;
}

ParamSchema distributed_schema() {
  return {
      string_param("backend", "auto",
                   "the collective engine: auto (NCCL on CUDA, Gloo on the CPU), gloo or nccl")
          .one_of({"auto", "gloo", "nccl"}),
      real_param("bucket_size_mb", 25.0,
                 "gradients are all-reduced in buckets of about this size, each started as soon as backward "
                 "has filled it (MindSpore's all-reduce fusion groups)")
          .greater_than(0)
          .at_most(4096),
      real_param("timeout_s", 60.0,
                 "how long a rendezvous or a collective waits for the other workers before the run fails; a dead "
                 "or hung worker ends the job within this time")
          .greater_than(0)
          .at_most(86400),
  };
}

TableSpec core_table(std::string name, std::string doc, ParamSchema schema,
                     std::vector<std::string> resume_safe_keys = {}) {
  return TableSpec{std::move(name), std::move(doc), std::move(schema), std::nullopt, "", {}, {},
                   std::move(resume_safe_keys)};
}

TableSpec component_table(std::string name, std::string doc, ParamSchema schema, ComponentKind kind,
                          std::string default_plugin, std::vector<TableSpec> lists = {},
                          EntriesRule entries_rule = {}, std::vector<std::string> resume_safe_keys = {}) {
  return TableSpec{std::move(name), std::move(doc),           std::move(schema),      kind, std::move(default_plugin),
                   std::move(lists), std::move(entries_rule), std::move(resume_safe_keys)};
}

// [[hooks]]: any number, in order; they watch training and never change it.
TableSpec hooks_table() {
  TableSpec spec = component_table("hooks",
                                   "hooks that watch training, in order: log_every_n_steps, stop_at_step, "
                                   "print_model_statistics, profile",
                                   {}, ComponentKind::hook, "");
  spec.is_array = true;
  spec.resume_safe_keys = {"*"};
  return spec;
}

}  // namespace

const std::vector<TableSpec>& recipe_tables() {
  static const std::vector<TableSpec> tables{
      core_table("run", "the run itself: seed, device, length, batch size, threads", run_schema(),
                 {"name", "num_workers", "prefetch_batches", "log_every", "threads"}),
      component_table("data", "the dataset component, and what data the recipe expects", data_schema(),
                      ComponentKind::dataset, "", {}, {}, {"expects"}),
      component_table("preprocessing",
                      "what turns the dataset's pixels into the model's input, with a train and an eval variant: "
                      "none (pixels / 255 at the dataset's size), resnet, inception",
                      {}, ComponentKind::preprocessing, "none"),
      component_table("model", "the model component and its memory format", model_schema(), ComponentKind::model, ""),
      core_table("loss", "the training loss (cross-entropy)", loss_schema()),
      component_table(
          "optimizer", "the base optimizer, weight decay and parameter groups", optimizer_schema(),
          ComponentKind::optimizer, "",
          {component_table("wrappers", "applied in order before the base optimizer", {},
                           ComponentKind::optimizer_wrapper, "", {}, wrapper_chain_problems),
           core_table("groups", "parameters by name with their own lr and decay scales",
                      group_schema())}),
      component_table("schedule", "the learning-rate schedule, with an optional warm-up", schedule_schema(),
                      ComponentKind::lr_schedule, "fixed"),
      core_table("precision", "mixed precision and fp16 loss scaling", precision_schema()),
      core_table("eval", "evaluation on the test split", eval_schema(), {"*"}),
      core_table("checkpoint", "when checkpoints are saved, and transfer learning from one", checkpoint_schema(),
                 {"dir", "every_steps", "every_epochs", "save_interval_secs", "keep_max", "at_end", "on_signal",
                  "init_from", "exclude", "strict"}),
      core_table("export", "a serving export (TorchScript in a Triton model repository) when training ends",
                 export_schema(), {"*"}),
      core_table("log", "the run store and the progress line", log_schema(), {"*"}),
      core_table("distributed", "data-parallel training: the collective engine and gradient buckets (--nproc, torchrun, srun, mpirun)",
                 distributed_schema(), {"*"}),
      component_table("gradient_compression",
                      "what each rank sends of its gradients: none (dense all-reduce) or dgc (Deep Gradient "
                      "Compression's top-k with local accumulation)",
                      {}, ComponentKind::gradient_compression, "none"),
      core_table("snapshots", "weight-only snapshots for dimension-reduce training's stage 1", snapshots_schema(),
                 {"*"}),
      core_table("dim_reduce", "dimension-reduce training's stage 2: descent in the PCA subspace of the snapshots",
                 dim_reduce_schema()),
      hooks_table(),
  };
  return tables;
}

const TableSpec* find_table(const std::string& name) {
  for (const auto& table : recipe_tables())
    if (table.name == name) return &table;
  return nullptr;
}

bool resume_safe_key(const std::string& flattened_key) {
  const auto dot = flattened_key.find('.');
  if (dot == std::string::npos) return false;
  const TableSpec* table = find_table(flattened_key.substr(0, dot));
  if (!table) return false;
  const std::string key = flattened_key.substr(dot + 1);
  for (const auto& safe : table->resume_safe_keys)
    if (safe == "*" || safe == key) return true;
  return false;
}

std::vector<std::string> table_names() {
  std::vector<std::string> out;
  for (const auto& table : recipe_tables()) out.push_back(table.name);
  return out;
}

}  // namespace orchestrate
