// Helpers shared by the run store's tests, and by the tests of the parts that
// record into a run: a sample run, a step, a scratch store with a run begun,
// and a way to catch an Error's message.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "orchestrate/error.h"
#include "orchestrate/testing/error_text.h"
#include "orchestrate/testing/scratch_dir.h"
#include "store/run_recorder.h"
#include "store/run_store.h"

namespace orchestrate::testing {

inline RunRecord sample_run(const std::string& name = "resnet50_lars") {
  RunRecord run;
  run.name = name;
  run.recipe_path = "recipes/resnet50_32k_lars.toml";
  run.resolved_recipe = "[run]\nname = \"resnet50_lars\"\n\n[optimizer]\nplugin = \"lars\"\nlr = 0.2\n";
  run.orchestrate_version = "0.1.0";
  run.torch_version = "2.11.0";
  run.host = "node7";
  run.device = "cuda:0";
  run.git_revision = "c99775a";
  run.world_size = 8;
  run.plugins = {{"lars", "1.0.0", "/opt/orchestrate/plugins/liblars.so", "ab12"},
                 {"resnet", "2.1.0", "/opt/orchestrate/plugins/libresnet.so", ""}};
  run.params = {{"optimizer.lr", "0.2"}, {"data.batch_size", "256"}};
  return run;
}

inline StepTiming step_number(std::int64_t step) {
  StepTiming timing;
  timing.step = step;
  timing.epoch = step / 100;
  timing.images = 256;
  timing.data_wait_s = 0.001 * static_cast<double>(step % 7);
  timing.compute_s = 0.006;
  timing.sync_s = 0.002;
  timing.optimizer_s = 0.001;
  timing.total_s = 0.01 + 0.0001 * static_cast<double>(step);
  timing.loss = 2.5 - 0.001 * static_cast<double>(step);
  timing.learning_rate = 0.1;
  return timing;
}

// A fresh store in a scratch directory with one run begun, and its recorder.
struct ScratchRun {
  ScratchDir dir;
  RunStore store{dir.file("runs.db")};
  std::int64_t id = store.begin_run(RunRecord{});
  RunRecorder recorder{store, id};

  // The run's events of `kind`, in the order recorded, the buffered ones written first.
  std::vector<EventRecord> events_of(const std::string& kind) {
    store.flush();
    std::vector<EventRecord> found;
    for (auto& event : store.events(id))
      if (event.kind == kind) found.push_back(std::move(event));
    return found;
  }
};

// error_of (orchestrate/testing/error_text.h), where no Error is itself a
// test failure: the message of the Error `work` is expected to throw.
inline std::string error_message_of(const std::function<void()>& work) {
  const std::string message = error_of(work);
  if (message.empty()) ADD_FAILURE() << "expected an orchestrate::Error with a message";
  return message;
}

}  // namespace orchestrate::testing
