// `orchestrate eval RECIPE --checkpoint PATH`: top-1, top-5 and loss of saved
// weights on the recipe's test split, recorded as an eval run linked to the
// training run that saved them.
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/options.h"
#include "cli/plugin_options.h"
#include "cli/shipped_recipes.h"
#include "engine/evaluation/checkpoint_evaluation.h"
#include "engine/evaluation/eval_target.h"
#include "engine/recipe/recipe.h"
#include "engine/train/progress_line.h"
#include "store/run_store.h"

namespace orchestrate::cli {

int eval_command(const std::vector<std::string>& arguments) {
  po::options_description options("eval options");
  options.add_options()("recipe", po::value<std::string>()->required(),
                         "recipe TOML file, or the name of a shipped recipe (orchestrate recipes)")(
      "checkpoint", po::value<std::string>()->required(),
      "the weights: a checkpoint directory, a run id or name (its newest checkpoint), or a .safetensors file")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a recipe value, e.g. --set eval.batch_size=500 (repeatable)");
  add_outcome_format_option(options, "eval");
  add_plugin_path_option(options);
  add_db_option(options);
  po::positional_options_description positional;
  positional.add("recipe", 1);
  po::variables_map values;
  if (!parse_options("eval", "RECIPE --checkpoint PATH [options]", options, positional, arguments, values)) return 0;

  const auto overrides =
      parse_overrides(values.count("set") ? values["set"].as<std::vector<std::string>>() : std::vector<std::string>{});
  Registry registry;  // declared first: outlives every object its plugins create
  load_all_plugins(registry, values);
  const Recipe recipe = load_recipe(recipe_file_or_shipped(values["recipe"].as<std::string>()), overrides, registry);

  // Everything that can be refused is, before the run store is created or
  // written: a refused evaluation leaves no run behind.
  const std::string db = db_path(values, recipe.table("log").core.string("db"));
  std::optional<RunStore> store;
  if (std::filesystem::exists(db)) store.emplace(db);
  const EvalTarget target = resolve_eval_target(values["checkpoint"].as<std::string>(), store ? &*store : nullptr);
  CheckpointEvaluation evaluation(recipe, registry, target);
  if (!store) store.emplace(db);
  // Progress on stderr, so stdout holds the result alone (--format json):
  // redrawn on a terminal, else a line every kEvaluationLineSeconds.
  ProgressLine progress(std::cerr, parse_progress_mode(recipe.table("log").core.string("progress")), 1,
                        isatty(STDERR_FILENO) != 0);
  const EvalOutcome outcome =
      evaluation.run(*store, [&](std::int64_t done, std::int64_t batches, std::int64_t images) {
        progress.evaluating("eval", done, batches, images);
      });
  progress.clear();

  if (wants_json(values)) {
    // Full precision, null for what there is none of (top-5 under 5 classes).
    const auto number_or_null = [](double value) { return value >= 0 ? nlohmann::json(value) : nlohmann::json(); };
    const nlohmann::json object = {{"run_id", outcome.run_id},
                                   {"name", outcome.run_name},
                                   {"status", "finished"},
                                   {"weights", target.provenance},
                                   {"examples", outcome.result.examples},
                                   {"top1", outcome.result.top1},
                                   {"top5", number_or_null(outcome.result.top5)},
                                   {"loss", outcome.result.loss},
                                   {"seconds", outcome.seconds},
                                   {"images_per_s", outcome.images_per_s},
                                   {"db", store->path()}};
    std::cout << object.dump(2) << "\n";
    return 0;
  }
  std::cout << "eval run " << outcome.run_id << " '" << outcome.run_name << "': " << target.provenance << "\n"
            << format_eval(outcome.result) << "  (" << outcome.result.examples << " images, " << std::fixed
            << std::setprecision(2) << outcome.seconds << " s, " << std::setprecision(1) << outcome.images_per_s
            << " images/s)\nrecorded in " << store->path() << " (orchestrate runs --db " << store->path() << ")\n";
  return 0;
}

}  // namespace orchestrate::cli
