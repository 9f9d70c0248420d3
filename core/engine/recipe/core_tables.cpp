#include "engine/recipe/core_tables.h"

#include "engine/recipe/core_settings_tables.h"
#include "engine/recipe/recipe.h"
#include "orchestrate/optimizer_wrapper.h"

namespace orchestrate {

namespace {

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

// [data]'s own key beside the dataset's: a recipe that reads data the user
// provides says which, so an error about [data] (a missing directory) says
// what to get and how to make it.
ParamSchema data_schema() {
  return {
      string_param("expects", "",
                   "what data this recipe expects and how to make it; shown with any error about [data]")
          .safe_on_resume(),
  };
}

TableSpec core_table(std::string name, std::string doc, ParamSchema schema) {
  return TableSpec{std::move(name), std::move(doc), std::move(schema), std::nullopt, "", {}, {}};
}

// The plugin used when the recipe names none is default_plugin(name)'s
// (core_settings_tables.h), where the front end's reports read it too.
TableSpec component_table(std::string name, std::string doc, ParamSchema schema, ComponentKind kind,
                          std::vector<TableSpec> lists = {}, EntriesRule entries_rule = {}) {
  std::string plugin = default_plugin(name);
  return TableSpec{std::move(name), std::move(doc), std::move(schema), kind,
                   std::move(plugin), std::move(lists), std::move(entries_rule)};
}

// [[hooks]]: any number, in order; they watch training and never change it.
TableSpec hooks_table() {
  TableSpec spec = component_table("hooks",
                                   "hooks that watch training, in order: log_every_n_steps, stop_at_step, "
                                   "print_model_statistics, profile",
                                   {}, ComponentKind::hook);
  spec.is_array = true;
  spec.every_key_resume_safe = true;
  return spec;
}

}  // namespace

const std::vector<TableSpec>& recipe_tables() {
  static const std::vector<TableSpec> tables{
      core_table("run", "the run itself: seed, device, length, batch size, threads", run_keys().schema()),
      component_table("data", "the dataset component, and what data the recipe expects", data_schema(),
                      ComponentKind::dataset),
      component_table("preprocessing",
                      "what turns the dataset's pixels into the model's input, with a train and an eval variant: "
                      "none (pixels / 255 at the dataset's size), resnet, inception",
                      {}, ComponentKind::preprocessing),
      component_table("model", "the model component and its memory format", model_keys().schema(), ComponentKind::model),
      core_table("loss", "the training loss (cross-entropy)", loss_keys().schema()),
      component_table(
          "optimizer", "the base optimizer, weight decay and parameter groups", optimizer_keys().schema(),
          ComponentKind::optimizer,
          {component_table("wrappers", "applied in order before the base optimizer", {},
                           ComponentKind::optimizer_wrapper, {}, wrapper_chain_problems),
           core_table("groups", "parameters by name with their own lr and decay scales",
                      group_keys().schema())}),
      component_table("schedule", "the learning-rate schedule, with an optional warm-up", schedule_keys().schema(),
                      ComponentKind::lr_schedule),
      core_table("precision", "mixed precision and fp16 loss scaling", precision_keys().schema()),
      core_table("eval", "evaluation on the test split", eval_keys().schema()),
      core_table("checkpoint", "when checkpoints are saved, and transfer learning from one",
                 checkpoint_keys().schema()),
      core_table("export", "a serving export (TorchScript in a Triton model repository) when training ends",
                 export_keys().schema()),
      core_table("log", "the run store and the progress line", log_keys().schema()),
      core_table("distributed", "data-parallel training: the collective engine and gradient buckets (--nproc, torchrun, srun, mpirun)",
                 distributed_keys().schema()),
      component_table("gradient_compression",
                      "what each rank sends of its gradients: none (dense all-reduce) or dgc (Deep Gradient "
                      "Compression's top-k with local accumulation)",
                      {}, ComponentKind::gradient_compression),
      core_table("snapshots", "weight-only snapshots for dimension-reduce training's stage 1",
                 snapshots_keys().schema()),
      core_table("dim_reduce", "dimension-reduce training's stage 2: descent in the PCA subspace of the snapshots",
                 dim_reduce_keys().schema()),
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
  if (table->every_key_resume_safe) return true;
  const ParamSpec* spec = table->schema.find(flattened_key.substr(dot + 1));
  return spec && spec->resume_safe;
}

std::vector<std::string> table_names() {
  std::vector<std::string> out;
  for (const auto& table : recipe_tables()) out.push_back(table.name);
  return out;
}

}  // namespace orchestrate
