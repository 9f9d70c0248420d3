// The setup event's figures: the process's age read from /proc, and the
// phases in the order they ended, each timed from the end of the one before.
#include "engine/train/setup_timeline.h"

#include <gtest/gtest.h>

#include <thread>

namespace orchestrate {
namespace {

TEST(SetupTimeline, TheProcesssAgeGrowsWithTheClock) {
  const double before = process_age_seconds();
  ASSERT_GE(before, 0) << "/proc/self/stat and /proc/uptime are readable on Linux";
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  const double after = process_age_seconds();
  // Ticks of 10 ms on both clocks: the 120 ms show, within two ticks.
  EXPECT_GT(after - before, 0.09);
  EXPECT_LT(after - before, 2.0);
}

TEST(SetupTimeline, NamesEachPhaseWithItsOwnTimeInOrder) {
  const auto began = SetupTimeline::Clock::now();
  SetupTimeline timeline(began, 1.5);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  timeline.phase_done("components");
  timeline.phase_done("peak");
  const std::string text = timeline.text();
  EXPECT_EQ(text.rfind("before the run 1.50 s (the process's start", 0), 0U) << text;
  const auto components = text.find("components 0.0"), peak = text.find(", peak 0.00 s");
  ASSERT_NE(components, std::string::npos) << text;
  ASSERT_NE(peak, std::string::npos) << text;
  EXPECT_LT(components, peak);
  EXPECT_NE(text.find("s in all since the run began"), std::string::npos) << text;
  EXPECT_EQ(SetupTimeline(began, -1).text().find("before the run"), std::string::npos) << "unknown: left out";
}

}  // namespace
}  // namespace orchestrate
