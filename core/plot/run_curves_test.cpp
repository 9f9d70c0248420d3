#include "plot/run_curves.h"

#include <gtest/gtest.h>

#include "orchestrate/error.h"

namespace orchestrate::plot {
namespace {

// Two epochs of 4 steps, 100 images each taking 0.5 s; a loss every 2 steps, top-1 per epoch.
ChartedRun charted_run(std::int64_t id, const std::string& lr) {
  ChartedRun run;
  run.details.summary.id = id;
  run.details.summary.name = "r" + std::to_string(id);
  run.details.summary.final_metrics["time/setup_s"] = 3.0;
  run.details.record.resolved_recipe = "[optimizer]\nlr = " + lr + "\n";
  for (std::int64_t step = 1; step <= 8; ++step) {
    StepTiming timing;
    timing.step = step;
    timing.epoch = (step - 1) / 4 + 1;
    timing.images = 100;
    timing.total_s = 0.5;
    run.steps.push_back(timing);
    if (step % 2 == 0)
      run.metrics["train/loss"].push_back(
          {step, timing.epoch, 1.0 / static_cast<double>(step), 0, 2.0 * static_cast<double>(step)});
  }
  run.metrics["eval/top1"] = {{4, 1, 0.5, 0, 10}, {8, 2, 0.7, 0, 20}};
  return run;
}

TEST(RunCurvesTest, OnePanelPerMetricAndOneCurvePerRunNamedByWhatDiffers) {
  const Chart chart = run_curves_chart({charted_run(1, "0.1"), charted_run(2, "0.2")},
                                       {"train/loss", "eval/top1", "images_per_s"}, XAxis::step);
  ASSERT_EQ(chart.panels.size(), 3u);
  EXPECT_EQ(chart.panels[0].title, "train/loss");
  EXPECT_EQ(chart.panels[2].y_label, "images/s (per step)");
  EXPECT_EQ(chart.x_label, "step (optimizer updates)");
  for (const Panel& panel : chart.panels) {
    ASSERT_EQ(panel.curves.size(), 2u) << panel.title;
    EXPECT_EQ(panel.curves[0].label, "optimizer.lr=0.1");
    EXPECT_EQ(panel.curves[1].label, "optimizer.lr=0.2");
    EXPECT_EQ(panel.curves[1].colour, 1) << "a run keeps its colour in every panel";
  }
  const auto& loss = chart.panels[0].curves[0].points;
  ASSERT_EQ(loss.size(), 4u);
  EXPECT_DOUBLE_EQ(loss[0].first, 2);
  EXPECT_DOUBLE_EQ(loss[0].second, 0.5);
  const auto& speed = chart.panels[2].curves[0].points;
  ASSERT_EQ(speed.size(), 8u);
  EXPECT_DOUBLE_EQ(speed[3].first, 4);
  EXPECT_DOUBLE_EQ(speed[3].second, 200) << "100 images in 0.5 s";
}

TEST(RunCurvesTest, EpochsAreFractionalAndTimeCountsFromTheRunsStart) {
  const ChartedRun run = charted_run(1, "0.1");
  const Chart by_epoch = run_curves_chart({run}, {"train/loss", "images_per_s"}, XAxis::epoch);
  EXPECT_DOUBLE_EQ(by_epoch.panels[0].curves[0].points[0].first, 0.5) << "step 2 of 4 per epoch";
  EXPECT_DOUBLE_EQ(by_epoch.panels[1].curves[0].points[7].first, 2.0);
  const Chart by_time = run_curves_chart({run}, {"train/loss", "images_per_s"}, XAxis::time);
  EXPECT_DOUBLE_EQ(by_time.panels[0].curves[0].points[1].first, 8.0) << "as recorded";
  EXPECT_DOUBLE_EQ(by_time.panels[1].curves[0].points[0].first, 3.5) << "setup, then the first step";
}

TEST(RunCurvesTest, ImagesPerSecondOfALongRunIsOverWindowsOfSteps) {
  ChartedRun run = charted_run(1, "0.1");
  run.steps.clear();
  for (std::int64_t step = 1; step <= 130; ++step) {
    StepTiming timing;
    timing.step = step;
    timing.epoch = 1;
    timing.images = 100;
    timing.total_s = step % 2 == 0 ? 0.5 : 0.25;
    run.steps.push_back(timing);
  }
  const Chart chart = run_curves_chart({run}, {"images_per_s"}, XAxis::step);
  EXPECT_EQ(chart.panels[0].y_label, "images/s (per 3 steps)") << "at most 60 points";
  EXPECT_TRUE(chart.panels[0].y_from_zero);
  const auto& points = chart.panels[0].curves[0].points;
  ASSERT_EQ(points.size(), 44u) << "43 windows of 3 steps and one of the last step";
  EXPECT_DOUBLE_EQ(points[0].first, 3);
  EXPECT_DOUBLE_EQ(points[0].second, 300 / 1.0) << "300 images in 0.25 + 0.5 + 0.25 s";
  EXPECT_DOUBLE_EQ(points.back().first, 130);
  EXPECT_DOUBLE_EQ(points.back().second, 200);
}

TEST(RunCurvesTest, PhaseSharesAreEachWindowsPhaseTimeOverItsStepTime) {
  ChartedRun run = charted_run(1, "0.1");
  for (std::size_t i = 0; i < run.steps.size(); ++i) {
    run.steps[i].data_wait_s = i == 5 ? 0.4 : 0.1;  // one stall
    run.steps[i].compute_s = i == 5 ? 0.05 : 0.3;
  }
  const Chart chart = run_curves_chart({run}, {"data_wait_share", "compute_share", "sync_share"}, XAxis::step);
  ASSERT_EQ(chart.panels.size(), 3u);
  EXPECT_EQ(chart.panels[0].y_label, "data_wait_share (of step time, per step)");
  EXPECT_TRUE(chart.panels[0].y_is_share);
  const auto& wait = chart.panels[0].curves[0].points;
  ASSERT_EQ(wait.size(), 8u);
  EXPECT_DOUBLE_EQ(wait[0].second, 0.2);
  EXPECT_DOUBLE_EQ(wait[5].second, 0.8);
  EXPECT_DOUBLE_EQ(chart.panels[1].curves[0].points[5].second, 0.1);
  // Training alone syncs nothing: a flat line at 0, still drawn.
  EXPECT_DOUBLE_EQ(chart.panels[2].curves[0].points[0].second, 0.0);
}

TEST(RunCurvesTest, AMetricNoRunRecordedIsAnErrorListingTheOnesTheyHave) {
  try {
    run_curves_chart({charted_run(1, "0.1")}, {"train/los"}, XAxis::step);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& error) {
    EXPECT_STREQ(error.what(),
                 "plot: no run here recorded metric 'train/los' (recorded: compute_share, data_wait_share, eval/top1, "
                 "images_per_s, optimizer_share, sync_share, train/loss)");
  }
  EXPECT_THROW(parse_x_axis("steps"), UsageError);
  EXPECT_EQ(parse_x_axis("epoch"), XAxis::epoch);
}

}  // namespace
}  // namespace orchestrate::plot
