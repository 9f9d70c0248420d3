#include "plot/scaling_chart.h"

#include <gtest/gtest.h>

#include "orchestrate/error.h"

namespace orchestrate::plot {
namespace {

ThroughputRow row(std::int64_t id, int workers, double median) {
  ThroughputRow r;
  r.run_id = id;
  r.name = "w" + std::to_string(workers);
  r.device = "cuda:0";
  r.workers = workers;
  r.median_images_per_s = median;
  r.images_per_s = median * 0.9;
  return r;
}

TEST(ScalingChartTest, MeasuredPointsBesideTheIdealLineFromTheSmallestRun) {
  const Chart chart = scaling_chart({row(7, 4, 3000), row(5, 1, 1000), row(6, 2, 1900)});
  ASSERT_EQ(chart.panels.size(), 1u);
  const auto& curves = chart.panels[0].curves;
  ASSERT_EQ(curves.size(), 2u);
  const Curve& ideal = curves[0];
  const Curve& measured = curves[1];
  EXPECT_EQ(ideal.style, CurveStyle::dashed_reference);
  EXPECT_EQ(ideal.label, "ideal: linear from w1 #5 (1 worker)");
  EXPECT_EQ(ideal.points, (std::vector<std::pair<double, double>>{{1, 1000}, {2, 2000}, {4, 4000}}));
  EXPECT_EQ(measured.points, (std::vector<std::pair<double, double>>{{1, 1000}, {2, 1900}, {4, 3000}}));
  EXPECT_EQ(measured.point_labels, (std::vector<std::string>{"100%", "95%", "75%"}));
  EXPECT_EQ(chart.x_label, "workers (data-parallel ranks)");
  EXPECT_TRUE(chart.panels[0].y_from_zero);
}

TEST(ScalingChartTest, ARunWithoutMeasuredStepsIsAnError) {
  EXPECT_THROW(scaling_chart({row(1, 1, 1000), row(2, 2, 0)}), UsageError);
  EXPECT_THROW(scaling_chart({}), UsageError);
}

}  // namespace
}  // namespace orchestrate::plot
