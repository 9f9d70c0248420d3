// `orchestrate bench-input RECIPE [--batches N] [--set k=v]...`: how fast the
// recipe's input pipeline alone hands out training batches (read, decode,
// preprocess, batch, the copy to the device and finish_batch there; no
// model), with its [run] num_workers threads: the first batch's latency
// (what a run or a resumed run waits before its first step) and images/s
// over the N batches after it (core/engine/setup/input_benchmark.h).
#include <algorithm>
#include <iomanip>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/options.h"
#include "cli/plugin_options.h"
#include "cli/shipped_recipes.h"
#include "engine/recipe/recipe.h"
#include "engine/setup/input_benchmark.h"
#include "orchestrate/error.h"

namespace orchestrate::cli {

int bench_input_command(const std::vector<std::string>& arguments) {
  po::options_description options("bench-input options");
  options.add_options()("recipe", po::value<std::string>()->required(),
                         "recipe TOML file, or the name of a shipped recipe (orchestrate recipes)")(
      "batches", po::value<std::int64_t>()->default_value(50), "batches to time after the first")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a recipe value, e.g. --set run.num_workers=4 (repeatable)");
  add_outcome_format_option(options, "bench-input");
  add_plugin_path_option(options);
  po::positional_options_description positional;
  positional.add("recipe", 1);
  po::variables_map values;
  if (!parse_options("bench-input", "RECIPE [--batches N] [options]", options, positional, arguments, values))
    return 0;
  const std::int64_t timed = values["batches"].as<std::int64_t>();
  if (timed < 1) throw UsageError("bench-input: --batches must be at least 1");

  const auto overrides =
      parse_overrides(values.count("set") ? values["set"].as<std::vector<std::string>>() : std::vector<std::string>{});
  Registry registry;  // declared first: outlives every object its plugins create
  load_all_plugins(registry, values);
  const Recipe recipe = load_recipe(recipe_file_or_shipped(values["recipe"].as<std::string>()), overrides, registry);
  const InputMeasurement m = measure_input(recipe, registry, timed + 1);
  const std::int64_t batch_size = m.batches > 1 ? m.images / (m.batches - 1) : 0;
  if (wants_json(values)) {
    const nlohmann::json object = {{"first_batch_s", m.first_batch_s},
                                   {"images_per_s", m.images_per_s},
                                   {"images_per_s_per_thread", m.images_per_s / std::max(m.workers, 1)},
                                   {"batches", m.batches - 1},
                                   {"batch_size", batch_size},
                                   {"workers", m.workers},
                                   {"prefetch", m.prefetch},
                                   {"device", m.device},
                                   {"setup_s", m.setup_s}};
    std::cout << object.dump(2) << "\n";
    return 0;
  }
  std::cout << std::fixed << std::setprecision(4) << "first_batch_s=" << m.first_batch_s << std::setprecision(1)
            << " images_per_s=" << m.images_per_s << " batches=" << m.batches - 1
            << " batch_size=" << batch_size << " workers=" << m.workers
            << " prefetch=" << m.prefetch << " device=" << m.device << std::setprecision(2) << " setup_s=" << m.setup_s
            << std::setprecision(1) << " images_per_s_per_thread=" << m.images_per_s / std::max(m.workers, 1) << "\n";
  return 0;
}

}  // namespace orchestrate::cli
