#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "orchestrate/lr_schedule.h"
#include "orchestrate/plugin.h"
#include "orchestrate/testing/plugin_under_test.h"


namespace {

TEST(FixedSchedule, GivesTheBaseLrAtEveryStep) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& entry = registry.lr_schedules().get("fixed");
  const auto schedule = entry.create(orchestrate::default_params(entry.info.schema), {0.05, 100, 1000});
  for (const std::int64_t step : {0, 1, 99, 100, 999, 1000, 1000000})
    EXPECT_DOUBLE_EQ(schedule->learning_rate(step), 0.05);
}

}  // namespace
