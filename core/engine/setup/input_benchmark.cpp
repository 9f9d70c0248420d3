#include "engine/setup/input_benchmark.h"

#include <algorithm>
#include <chrono>
#include <sstream>

#include "engine/input/batch_pipeline.h"
#include "engine/input/device_batch_feeder.h"
#include "engine/input/rank_shards.h"
#include "engine/recipe/recipe_settings.h"
#include "engine/setup/components.h"
#include "engine/setup/compute_setup.h"
#include "engine/setup/elapsed_seconds.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

InputMeasurement measure_input(const Recipe& recipe, const Registry& registry, std::int64_t batches) {
  const Settings& s = settings_of(recipe);
  const ComputeSetup compute = set_up_compute(s);
  InputMeasurement m;
  m.workers = compute.pipeline.workers;
  m.prefetch = compute.pipeline.prefetch;
  std::ostringstream device;
  device << compute.device;
  m.device = device.str();
  const auto start = Clock::now();
  const auto train_set = build_train_set(s, registry);
  const auto preprocessing = build_preprocessing(s, registry, train_set->info(), PreprocessingVariant::train);
  const std::int64_t shuffle_buffer = stream_shuffle_buffer(s, *train_set);
  m.setup_s = seconds_since(start);

  const auto shards = std::make_shared<RankShards>(train_set->size(), train_set->examples_per_file(), 1);
  const std::int64_t batch = s.run.batch_size;
  const std::int64_t per_epoch = shards->examples_per_rank() / batch;
  if (per_epoch == 0)
    throw RecipeError("[run] batch_size = " + std::to_string(batch) + " is larger than the training split (" +
                      std::to_string(train_set->size()) + " images); lower it");
  const std::int64_t total =
      std::max<std::int64_t>(2, batches > 0 ? batches : s.run.max_steps > 0 ? s.run.max_steps : s.run.epochs * per_epoch);
  const std::int64_t epochs = (total + per_epoch - 1) / per_epoch;

  const auto piped = Clock::now();
  BatchPipeline pipeline(
      SampleSource{*train_set, *preprocessing, s.run.seed, 0, 1},
      [shards, batch, seed = s.run.seed, per_epoch, shuffle_buffer](std::int64_t epoch) {
        auto planned = shards->batches(0, batch, seed, epoch, shuffle_buffer);
        planned.resize(static_cast<std::size_t>(per_epoch));
        return planned;
      },
      per_epoch, epochs, compute.pipeline);
  DeviceBatchFeeder feeder(pipeline, compute.device);
  Clock::time_point first;
  while (m.batches < total) {
    auto next = feeder.next();
    if (!next) break;
    // finish_batch, the float conversion and normalization a training step
    // starts with, waited for (on the CPU the pipeline's threads did it).
    if (!next->images.is_cpu()) (void)next->images.sum().item<double>();
    if (m.batches++ == 0) {
      first = Clock::now();
      m.first_batch_s = std::chrono::duration<double>(first - piped).count();
    } else {
      m.images += next->labels.size(0);
    }
  }
  m.seconds = std::chrono::duration<double>(Clock::now() - first).count();
  m.images_per_s = m.seconds > 0 ? static_cast<double>(m.images) / m.seconds : 0;
  return m;
}

}  // namespace orchestrate
