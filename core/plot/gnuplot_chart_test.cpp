#include "plot/gnuplot_chart.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "orchestrate/error.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate::plot {
namespace {

Chart two_curves() {
  Chart chart;
  chart.title = "train/loss of 2 runs";
  chart.x_label = "step";
  chart.panels.emplace_back();
  chart.panels[0].title = chart.panels[0].y_label = "train/loss";
  chart.panels[0].curves.push_back({"optimizer.lr=0.1", {{1, 2.0}, {2, 1.5}}, CurveStyle::line, 0, {}});
  chart.panels[0].curves.push_back({"it's lr=0.2", {{1, 2.1}, {2, 1.2}}, CurveStyle::line, 1, {}});
  return chart;
}

TEST(GnuplotChartTest, TheExtensionPicksTheFormat) {
  EXPECT_EQ(picture_format_of("a/b.svg"), PictureFormat::svg);
  EXPECT_EQ(picture_format_of("B.PNG"), PictureFormat::png);
  try {
    picture_format_of("x.bmp");
    FAIL() << "expected a UsageError";
  } catch (const UsageError& error) {
    EXPECT_STREQ(error.what(),
                 "plot: -o x.bmp: unknown picture type '.bmp' (known: .svg, .png; the extension picks the format)");
  }
}

TEST(GnuplotChartTest, TheScriptQuotesLabelsAndTurnsOffEnhancedText) {
  const std::string script = gnuplot_script(two_curves(), PictureFormat::png, "/tmp/o'k.png");
  EXPECT_NE(script.find("set terminal pngcairo"), std::string::npos) << script;
  EXPECT_NE(script.find("noenhanced"), std::string::npos) << "'_' must not become a subscript\n" << script;
  EXPECT_NE(script.find("set output '/tmp/o''k.png'"), std::string::npos) << script;
  EXPECT_NE(script.find("title 'it''s lr=0.2'"), std::string::npos) << script;
}

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

TEST(GnuplotChartTest, DrawsAnSvgWithOnePathPerCurveInItsColourAndItsLegendText) {
  testing::ScratchDir dir;
  const std::string path = dir.file("chart.svg");
  draw_chart(two_curves(), path);
  const std::string svg = testing::file_bytes(path);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  // gnuplot puts each curve in a group of its own: its legend text, then one path in its colour.
  EXPECT_EQ(occurrences(svg, "<g id=\"gnuplot_plot_"), 2u);
  EXPECT_EQ(occurrences(svg, "<path stroke='rgb( 31, 119, 180)'"), 1u) << "the first colour, #1f77b4";
  EXPECT_EQ(occurrences(svg, "<path stroke='rgb(255, 127,  14)'"), 1u) << "the second colour, #ff7f0e";
  EXPECT_EQ(occurrences(svg, "<text>optimizer.lr=0.1</text>"), 1u) << svg.substr(0, 3000);
  EXPECT_EQ(occurrences(svg, "<text>it's lr=0.2</text>"), 1u) << "a quote in a label survives gnuplot's quoting";
}

TEST(GnuplotChartTest, AMissingDirectoryIsAUsageError) {
  EXPECT_THROW(draw_chart(two_curves(), "/nonexistent-dir/chart.png"), UsageError);
}

}  // namespace
}  // namespace orchestrate::plot
