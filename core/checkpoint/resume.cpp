#include "checkpoint/resume.h"

#include <filesystem>
#include <map>

#include "engine/recipe/core_tables.h"
#include "orchestrate/error.h"
#include "orchestrate/registry.h"
#include "orchestrate/shell_word.h"
#include "store/run_store.h"
#include "store/sweep_records.h"

namespace orchestrate {

namespace fs = std::filesystem;

namespace {

// A key one recipe has and the other lacks (an [[hooks]] entry added, say).
constexpr const char* kUnsetValue = "(unset)";

// A key a changed value of which leaves the training trajectory alone: a
// core key or [[hooks]] entry by its table's spec (resume_safe_key), or a
// component's own key ("data.note") by its spec in the plugin the resuming
// recipe names.
bool safe_to_change(const std::string& key, const Recipe& recipe, const Registry& registry) {
  if (resume_safe_key(key)) return true;
  const auto dot = key.find('.');
  const TableSpec* table = dot == std::string::npos ? nullptr : find_table(key.substr(0, dot));
  if (!table || !table->kind || table->is_array) return false;
  const std::string& plugin = recipe.table(table->name).plugin;
  for (const ComponentInfo* info : registry.components(*table->kind))
    if (info->name == plugin) {
      const ParamSpec* spec = info->schema.find(key.substr(dot + 1));
      return spec && spec->resume_safe;
    }
  return false;
}

std::string same_file_key(const std::string& path) {
  std::error_code error;
  const auto canonical = fs::weakly_canonical(path, error);
  return error ? path : canonical.string();
}

}  // namespace

std::string newest_checkpoint_of(const RunStore& store, std::int64_t run_id) {
  auto rows = store.checkpoints(run_id);
  for (auto it = rows.rbegin(); it != rows.rend(); ++it)
    if (is_checkpoint(it->path)) return it->path;
  return "";
}

std::string resolve_resume_target(const std::string& given, const Recipe& recipe, const RunStore& store) {
  const std::string argument = given == kResumeAuto ? "" : given;
  std::error_code error;
  if (!argument.empty() && fs::is_directory(argument, error)) {
    if (!is_checkpoint(argument))
      throw UsageError("--resume " + argument + ": not a checkpoint directory (no " + kMetaFile +
                       "); `orchestrate checkpoints RUN` lists a run's checkpoints");
    return argument;
  }
  if (!argument.empty()) {
    const auto run = store.find_run(argument);
    if (!run)
      throw UsageError("--resume " + argument + ": no such checkpoint directory, and no run with that id or name in " +
                       store.path() + "; `orchestrate runs` lists the runs");
    const std::string newest = newest_checkpoint_of(store, run->id);
    if (newest.empty())
      throw UsageError("--resume " + argument + ": run " + std::to_string(run->id) +
                       " has no checkpoint on disk; it cannot be resumed");
    return newest;
  }
  const std::string recipe_key = same_file_key(recipe.path);
  for (const auto& run : store.list_runs()) {
    if (same_file_key(run.recipe_path) != recipe_key) continue;
    // A sweep's trial is the sweep's to continue (`sweep --resume`), not this command's.
    if (run.tags.count(kSweepIdTag)) continue;
    const std::string newest = newest_checkpoint_of(store, run.id);
    if (!newest.empty()) return newest;
  }
  return "";
}

std::vector<std::string> check_resume_recipe(const CheckpointMeta& checkpoint, const std::string& checkpoint_path,
                                             const Recipe& recipe, const Registry& registry, int world_size,
                                             const std::map<std::string, std::string>& judged) {
  std::map<std::string, std::string> now;
  for (const auto& [key, value] : recipe.flattened()) now[key] = value;
  std::map<std::string, std::pair<std::string, std::string>> changed;  // key -> (old, new)
  for (const auto& [key, value] : checkpoint.recipe_params) {
    auto it = now.find(key);
    const std::string current = it == now.end() ? kUnsetValue : it->second;
    if (current != value) changed[key] = {value, current};
  }
  for (const auto& [key, value] : now)
    if (!checkpoint.recipe_params.count(key)) changed[key] = {kUnsetValue, value};

  std::vector<std::string> allowed;
  const auto old_batch = checkpoint.recipe_params.find("run.batch_size");
  const std::int64_t batch = recipe.table("run").core.integer("batch_size");
  if (old_batch != checkpoint.recipe_params.end() && world_size != checkpoint.world_size) {
    const std::int64_t global = std::stoll(old_batch->second) * checkpoint.world_size;
    if (batch * world_size != global)
      throw RecipeError(recipe.path + ": cannot resume from " + checkpoint_path + " on " + std::to_string(world_size) +
                        " rank(s): it was saved by " + std::to_string(checkpoint.world_size) +
                        " with a global batch of " + std::to_string(global) + ", which " + std::to_string(world_size) +
                        " x run.batch_size " + std::to_string(batch) + " would change; resume with --set " +
                        "run.batch_size=" + (global % world_size == 0 ? std::to_string(global / world_size)
                                                                       : "<global batch / ranks>"));
    changed.erase("run.batch_size");
    allowed.push_back("ranks: " + std::to_string(checkpoint.world_size) + " -> " + std::to_string(world_size) +
                      " (global batch " + std::to_string(global) + " kept, run.batch_size " + old_batch->second +
                      " -> " + std::to_string(batch) + ")");
  }
  // Every change that would alter the trajectory, in one line, with the
  // arguments that put the checkpoint's values back.
  std::vector<std::string> refused;
  std::string restore;
  for (const auto& [key, values] : changed) {
    const std::string what = key + ": " + values.first + " -> " + values.second;
    const auto judgement = judged.find(key);
    if (judgement != judged.end() ? judgement->second.empty() : safe_to_change(key, recipe, registry)) {
      allowed.push_back(what);
      continue;
    }
    refused.push_back(what + (judgement != judged.end() ? " (" + judgement->second + ")" : ""));
    const std::string undo =
        values.first == kUnsetValue ? "drop the --set of " + key : "--set " + shell_word(key + "=" + values.first);
    restore += (restore.empty() ? "" : " ") + undo;
  }
  if (!refused.empty()) {
    std::string list;
    for (const auto& what : refused) list += (list.empty() ? "" : "; ") + what;
    throw RecipeError(recipe.path + ": cannot resume from " + checkpoint_path + ": " + list +
                      (refused.size() == 1 ? " changes" : " change") + " the training trajectory; resume with the " +
                      "checkpoint's values (" + restore + "), or start a new run from these weights with " +
                      "[checkpoint] init_from = \"" + checkpoint_path + "\"");
  }
  return allowed;
}

}  // namespace orchestrate
