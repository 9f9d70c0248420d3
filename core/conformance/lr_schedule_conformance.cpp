// The learning-rate schedule contract.
// Part of share/doc/design.md's promise that each kind has a conformance test
// every plugin of that kind passes; run on the components conformance_plugins.h
// selected (`orchestrate conformance`).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "orchestrate/lr_schedule.h"

#include "conformance/conformance_plugins.h"

namespace {

using orchestrate::ComponentKind;
using namespace orchestrate::conformance;  // registry(), selected_names(), params_for(), ...

class LrScheduleConformance : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(LrScheduleConformance);

// What holds for every schedule, warm-ups included (step 0 need not be the base lr).
TEST_P(LrScheduleConformance, DefaultsGiveFiniteNonNegativeRatesPureInTheStep) {
  const auto& entry = registry().lr_schedules().get(GetParam());
  const orchestrate::ScheduleContext context{0.1, 100, 1000};
  const auto schedule = entry.create(params_for(ComponentKind::lr_schedule, GetParam()), context);
  ASSERT_NE(schedule, nullptr);
  std::vector<double> rates;
  for (std::int64_t step = 0; step <= context.total_steps + 10; ++step) {
    rates.push_back(schedule->learning_rate(step));
    ASSERT_TRUE(std::isfinite(rates.back()) && rates.back() >= 0) << "step " << step << ": lr " << rates.back();
  }
  // Pure in the step: asking again, backwards, gives the same rates.
  for (std::int64_t step = context.total_steps + 10; step >= 0; --step)
    ASSERT_EQ(schedule->learning_rate(step), rates[static_cast<std::size_t>(step)]) << "step " << step;
}

INSTANTIATE_TEST_SUITE_P(All, LrScheduleConformance, testing::ValuesIn(selected_names(ComponentKind::lr_schedule)),
                         name_of_param);

}  // namespace
