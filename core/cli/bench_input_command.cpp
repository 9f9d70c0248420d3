// `orchestrate bench-input RECIPE [--batches N] [--set k=v]...`: how fast the
// recipe's input pipeline alone hands out training batches (read, decode,
// preprocess, batch, and the copy to the device; no model), with its
// [run] num_workers threads: the first batch's latency (what a run or a
// resumed run waits before its first step) and images/s over N batches.
#include <chrono>
#include <iomanip>
#include <iostream>

#include "batch_pipeline.h"
#include "command.h"
#include "components.h"
#include "compute_setup.h"
#include "device_batch_feeder.h"
#include "epoch_plan.h"
#include "options.h"
#include "orchestrate/error.h"
#include "plugin_options.h"
#include "recipe.h"
#include "settings.h"

namespace orchestrate::cli {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }
}  // namespace

int bench_input_command(const std::vector<std::string>& arguments) {
  po::options_description options("bench-input options");
  options.add_options()("recipe", po::value<std::string>()->required(), "recipe TOML file")(
      "batches", po::value<std::int64_t>()->default_value(50), "batches to time after the first")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a recipe value, e.g. --set run.num_workers=4 (repeatable)");
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
  const Recipe recipe = load_recipe(values["recipe"].as<std::string>(), overrides, registry);
  const Settings s = settings_of(recipe);
  const ComputeSetup compute = set_up_compute(s);
  const auto dataset = registry.datasets().get(s.data_plugin).create(s.data_params, DatasetSplit::train);
  const auto preprocessing = build_preprocessing(s, registry, dataset->info(), PreprocessingVariant::train);

  const std::int64_t size = dataset->size();
  const std::int64_t batch = s.run.batch_size;
  const std::int64_t per_epoch = size / batch;
  if (per_epoch < 1)
    throw RecipeError("bench-input: [run] batch_size = " + std::to_string(batch) + " is more than the " +
                      std::to_string(size) + " training examples");
  const std::int64_t buffer = dataset->info().sequential ? s.run.shuffle_buffer_size : 0;
  const EpochPlan plan = [=](std::int64_t epoch) {
    return buffer > 0 ? buffer_shuffled_batches(size, buffer, batch, s.run.seed, epoch, true)
                      : shuffled_batches(size, batch, s.run.seed, epoch, true);
  };
  const std::int64_t epochs = (timed + 1 + per_epoch - 1) / per_epoch;

  const auto start = Clock::now();
  BatchPipeline pipeline({*dataset, *preprocessing, s.run.seed}, plan, per_epoch, epochs, compute.pipeline);
  DeviceBatchFeeder feeder(pipeline, compute.device);
  if (!feeder.next()) throw Error("bench-input: the pipeline gave no batch");
  const double first_batch_s = seconds_since(start);
  const auto timing = Clock::now();
  for (std::int64_t b = 0; b < timed; ++b) feeder.next();
  const double seconds = seconds_since(timing);

  std::cout << std::fixed << std::setprecision(4) << "first_batch_s=" << first_batch_s << std::setprecision(1)
            << " images_per_s=" << static_cast<double>(timed * batch) / seconds << " batches=" << timed
            << " batch_size=" << batch << " workers=" << compute.pipeline.workers
            << " prefetch=" << compute.pipeline.prefetch << " device=" << compute.device << "\n";
  return 0;
}

}  // namespace orchestrate::cli
