#include "plot/sweep_chart.h"

#include <gtest/gtest.h>

#include "orchestrate/error.h"
#include "orchestrate/testing/error_text.h"

namespace orchestrate::plot {
namespace {

SweepTrialRecord trial(std::int64_t n, const std::string& lr, const std::string& warmup, const std::string& state,
                       std::optional<double> value) {
  SweepTrialRecord t;
  t.trial = n;
  t.overrides = {{"optimizer.lr", lr}, {"schedule.warmup", warmup}, {"run.epochs", "8"}};
  t.state = state;
  t.value = value;
  return t;
}

SweepDetails three_trials() {
  SweepDetails sweep;
  sweep.sweep.id = 4;
  sweep.sweep.name = "lr";
  sweep.sweep.metric = "eval/top1";
  sweep.sweep.best_trial = 1;
  sweep.trials = {trial(0, "0.0003", "\"none\"", "stopped", 0.61), trial(1, "0.003", "\"linear\"", "finished", 0.88),
                  trial(2, "0.01", "\"none\"", "failed", std::nullopt)};
  return sweep;
}

TEST(SweepChartTest, APanelForEachParameterThatVariesWithTheTrialsAsPoints) {
  const Chart chart = sweep_chart(three_trials());
  ASSERT_EQ(chart.panels.size(), 2u) << "run.epochs is 8 for every trial: no panel";
  const Panel& lr = chart.panels[0];
  EXPECT_EQ(lr.x_label, "optimizer.lr");
  EXPECT_EQ(lr.y_label, "eval/top1");
  EXPECT_TRUE(lr.x_log) << "0.0003 to 0.01 spans decades";
  ASSERT_EQ(lr.curves.size(), 3u) << "run to the end, stopped early, the best; the failed trial has no point";
  EXPECT_EQ(lr.curves[0].points, (std::vector<std::pair<double, double>>{{0.003, 0.88}}));
  EXPECT_EQ(lr.curves[0].style, CurveStyle::points);
  EXPECT_EQ(lr.curves[1].points, (std::vector<std::pair<double, double>>{{0.0003, 0.61}}));
  EXPECT_EQ(lr.curves[2].point_labels, (std::vector<std::string>{"trial 1"}));
  const Panel& warmup = chart.panels[1];
  EXPECT_FALSE(warmup.x_log);
  EXPECT_EQ(warmup.x_categories, (std::vector<std::string>{"none", "linear"}));
  EXPECT_EQ(warmup.curves[0].points, (std::vector<std::pair<double, double>>{{1, 0.88}})) << "linear is place 1";
}

TEST(SweepChartTest, NothingToPlotIsAUsageError) {
  SweepDetails none = three_trials();
  for (auto& t : none.trials) t.value.reset();
  EXPECT_NE(testing::error_of([&] { sweep_chart(none); }).find("has no trial with a value of eval/top1"),
            std::string::npos);
  SweepDetails same = three_trials();
  for (auto& t : same.trials) t.overrides = {{"run.epochs", "8"}};
  EXPECT_NE(testing::error_of([&] { sweep_chart(same); }).find("no parameter to plot against"), std::string::npos);
}

}  // namespace
}  // namespace orchestrate::plot
