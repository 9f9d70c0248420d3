// `orchestrate plot` and `orchestrate export tensorboard` end to end, over
// two real (short, mock-data) training runs that differ in learning rate:
// the pictures gnuplot draws, the errors, and TensorBoard event files read
// back by the tensorboard package's own EventAccumulator.
#include <gtest/gtest.h>

#include <set>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "build_paths.h"
#include "command_runner.h"
#include "orchestrate/testing/python_reference.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

// 20 steps an epoch, 2 epochs, evaluated after each: a loss every 5 steps, a top-1 per epoch.
const std::string kMockRecipe = R"(schema_version = 1
[run]
name = "NAME"
batch_size = 32
epochs = 2
log_every = 5
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 640
test_size = 128
[model]
plugin = "lenet"
[optimizer]
plugin = "adam"
lr = LR
)";

std::string with(std::string text, const std::string& placeholder, const std::string& value) {
  return text.replace(text.find(placeholder), placeholder.size(), value);
}

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

// Two runs trained once for every test here: "steady" (lr 0.0005, run 1) and "bold" (lr 0.003, run 2).
class PlotCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir;
    db_ = dir_->file("runs.db");
    for (const auto& [name, lr] : {std::pair{"steady", "0.0005"}, std::pair{"bold", "0.003"}}) {
      const auto recipe = dir_->write(std::string(name) + ".toml", with(with(kMockRecipe, "NAME", name), "LR", lr));
      const auto trained = run_orchestrate("run " + recipe + " --db " + db_ + " --quiet");
      ASSERT_EQ(trained.exit_code, 0) << trained.output;
    }
  }
  static void TearDownTestSuite() { delete dir_; }

  static CommandResult orchestrate(const std::string& arguments) { return run_orchestrate(arguments + " --db " + db_); }

  static ScratchDir* dir_;
  static std::string db_;
};
ScratchDir* PlotCli::dir_ = nullptr;
std::string PlotCli::db_;

TEST_F(PlotCli, SvgHasOneCurvePerRunPerMetricNamedByTheLearningRate) {
  const std::string svg_path = dir_->file("curves.svg");
  const auto plotted = orchestrate("plot steady bold --metric train/loss,eval/top1,images_per_s -o " + svg_path);
  ASSERT_EQ(plotted.exit_code, 0) << plotted.output;
  EXPECT_EQ(plotted.output, "wrote " + svg_path + ": train/loss, eval/top1, images_per_s of steady #1, bold #2\n");

  const std::string svg = file_bytes(svg_path);
  ASSERT_EQ(svg.rfind("<?xml", 0), 0u) << svg.substr(0, 200);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(occurrences(svg, "<svg"), occurrences(svg, "</svg>"));
  // gnuplot draws each curve as a group of its own holding its legend text
  // and one path in its colour: the first run #1f77b4, the second #ff7f0e.
  EXPECT_EQ(occurrences(svg, "<g id=\"gnuplot_plot_"), 6u) << "2 runs x 3 metrics";
  EXPECT_EQ(occurrences(svg, "<path stroke='rgb( 31, 119, 180)'"), 3u) << "run 1: one curve in each of 3 panels";
  EXPECT_EQ(occurrences(svg, "<path stroke='rgb(255, 127,  14)'"), 3u) << "run 2: one curve in each of 3 panels";
  for (const std::string label : {"optimizer.lr=0.0005", "optimizer.lr=0.003"})
    EXPECT_EQ(occurrences(svg, "<text>" + label + "</text>"), 1u) << label << ": in the one legend";
  for (const std::string title :
       {">train/loss<", ">eval/top1<", ">images_per_s<", ">step (optimizer updates)<", ">images/s (per step)<"})
    EXPECT_NE(svg.find(title), std::string::npos) << title;
  EXPECT_EQ(svg.find("run.name="), std::string::npos) << "the name is not what differs in the recipes";

  const auto by_epoch = orchestrate("plot --last 2 --metric eval/top1 --x epoch -o " + dir_->file("epoch.svg"));
  ASSERT_EQ(by_epoch.exit_code, 0) << by_epoch.output;
  EXPECT_NE(file_bytes(dir_->file("epoch.svg")).find(">epoch<"), std::string::npos);
}

TEST_F(PlotCli, PngHasTheSignatureAndTheSizeOfThreePanels) {
  const std::string png_path = dir_->file("curves.png");
  const auto plotted = orchestrate("plot 1 2 --metric train/loss,eval/top1,images_per_s --x time -o " + png_path);
  ASSERT_EQ(plotted.exit_code, 0) << plotted.output;
  const std::string png = file_bytes(png_path);
  ASSERT_GT(png.size(), 24u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  auto big_endian = [&](std::size_t at) {
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < 4; ++i) value = value << 8 | static_cast<unsigned char>(png[at + i]);
    return value;
  };
  EXPECT_EQ(big_endian(16), 1100u) << "width";
  EXPECT_EQ(big_endian(20), 45u + 22 + 20 + 30 + 3 * 300 + 2 * 105 + 60)
      << "height: a title, a legend row, three panels";
  EXPECT_GT(png.size(), 20'000u) << "three panels of curves, text and a legend";
  EXPECT_LT(png.size(), 2'000'000u);
}

TEST_F(PlotCli, ScalingChartsImagesPerSecondAgainstWorkers) {
  const std::string svg_path = dir_->file("scaling.svg");
  const auto plotted = orchestrate("plot --scaling steady bold -o " + svg_path);
  ASSERT_EQ(plotted.exit_code, 0) << plotted.output;
  const std::string svg = file_bytes(svg_path);
  EXPECT_NE(svg.find(">workers (data-parallel ranks)<"), std::string::npos);
  EXPECT_NE(svg.find("<text>measured: median images/s of a steady-state step</text>"), std::string::npos);
  EXPECT_NE(svg.find("<text>ideal: linear from steady #1 (1 worker)</text>"), std::string::npos) << svg.substr(0, 4000);
  EXPECT_NE(svg.find(">100%<"), std::string::npos) << "the baseline run is its own ideal";

  const auto with_metric = orchestrate("plot --scaling 1 --metric train/loss -o " + svg_path);
  EXPECT_EQ(with_metric.exit_code, 2);
  EXPECT_EQ(with_metric.output,
            "orchestrate: error: plot: --scaling draws images/s against workers; --metric and --x are for curves, "
            "leave them out\n");
}

TEST_F(PlotCli, BadInputIsAOneLineErrorAndNoPicture) {
  const std::string out = dir_->file("never.svg");
  const auto metric = orchestrate("plot 1 2 --metric train/loss,train/los -o " + out);
  EXPECT_EQ(metric.exit_code, 2);
  EXPECT_EQ(metric.output,
            "orchestrate: error: plot: no run here recorded metric 'train/los' (recorded: compute_share, "
            "data_wait_share, eval/loss, eval/top1, eval/top5, images_per_s, optimizer_share, "
            "perf/peak_flops_per_s, perf/train_flops_per_image, sync_share, time/eval_s, time/setup_s, "
            "train/learning_rate, train/loss, train/reg_loss, train/top1, train/top5)\n");

  const auto run = orchestrate("plot 1 nosuch --metric train/loss -o " + out);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.output, "orchestrate: error: no run 'nosuch' in " + db_ + "; `orchestrate runs` lists the runs\n");

  const auto bmp = orchestrate("plot 1 2 -o " + dir_->file("x.bmp"));
  EXPECT_EQ(bmp.exit_code, 2);
  EXPECT_EQ(bmp.output, "orchestrate: error: plot: -o " + dir_->file("x.bmp") +
                            ": unknown picture type '.bmp' (known: .svg, .png; the extension picks the format)\n");

  const auto axis = orchestrate("plot 1 --x wall -o " + out);
  EXPECT_EQ(axis.exit_code, 2);
  EXPECT_EQ(axis.output, "orchestrate: error: --x wall: unknown x axis (known: step, epoch, time)\n");

  const auto no_gnuplot =
      run_shell("PATH=/nonexistent " + std::string(orchestrate::build_paths::kOrchestrateBin) + " plot 1 -o " + out + " --db " + db_);
  EXPECT_EQ(no_gnuplot.exit_code, 1);
  EXPECT_EQ(no_gnuplot.output,
            "orchestrate: error: plot: gnuplot not found on PATH; install it with `apt-get install gnuplot-nox` "
            "(scripts/setup does)\n");
  EXPECT_FALSE(fs::exists(out)) << "no failed plot leaves a file";
}

struct StoredMetrics {
  std::map<std::string, double> by_name_and_step;  // "train/loss 5" -> value
  std::size_t rows = 0;
};

// Every metric value the store holds for `run`, straight from SQLite.
StoredMetrics stored_metrics(const std::string& db, int run) {
  const auto rows = run_shell(
      "sqlite3 -separator ' ' " + db +
      " \"SELECT name, step, printf('%.17g', value) FROM metrics WHERE run_id = " + std::to_string(run) + "\"");
  StoredMetrics metrics;
  std::istringstream lines(rows.output);
  for (std::string name, step, value; lines >> name >> step >> value; ++metrics.rows)
    metrics.by_name_and_step[name + " " + step] = std::stod(value);
  return metrics;
}

TEST_F(PlotCli, TensorBoardReadsBackEveryRecordedMetric) {
  const std::string logdir = dir_->file("tb");
  const auto exported = orchestrate("export tensorboard steady bold " + logdir);
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_NE(exported.output.find("view them with: tensorboard --logdir " + logdir), std::string::npos)
      << exported.output;
  ASSERT_TRUE(fs::is_directory(logdir + "/1-steady")) << exported.output;
  ASSERT_TRUE(fs::is_directory(logdir + "/2-bold")) << exported.output;
  // Again: the run's file is replaced, not joined by a second that would double every point.
  ASSERT_EQ(orchestrate("export tensorboard 1 " + logdir).exit_code, 0);
  EXPECT_EQ(std::distance(fs::directory_iterator(logdir + "/1-steady"), fs::directory_iterator{}), 1);

  const std::string read_back = run_python(R"(
import json, os, sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
root = ")" + logdir + R"("
runs = {}
for run in sorted(os.listdir(root)):
    events = EventAccumulator(os.path.join(root, run), size_guidance={"scalars": 0})
    events.Reload()
    runs[run] = {"file_version": events.file_version,
                 "scalars": {tag: [[e.step, e.value, e.wall_time] for e in events.Scalars(tag)]
                             for tag in events.Tags()["scalars"]}}
print(json.dumps(runs))
)");
  const auto runs = nlohmann::json::parse(read_back);
  ASSERT_EQ(runs.size(), 2u) << read_back;
  for (const auto& [directory, run_id] : {std::pair{"1-steady", 1}, std::pair{"2-bold", 2}}) {
    const auto& run = runs.at(directory);
    EXPECT_EQ(run["file_version"], 2.0) << directory;
    const StoredMetrics stored = stored_metrics(db_, run_id);
    ASSERT_GT(stored.rows, 10u);
    std::size_t scalars = 0;
    // What each log point adds from the step rows (live_run_events.h): not metrics of the store.
    // (train/learning_rate is a stored metric now, written once.)
    EXPECT_TRUE(run["scalars"].contains("train/learning_rate")) << directory;
    const std::set<std::string> from_rows = {"perf/images_per_s", "perf/step_s",
                                             "perf/data_wait_share", "perf/compute_share", "perf/sync_share",
                                             "perf/optimizer_share"};
    for (const auto& tag : from_rows) EXPECT_TRUE(run["scalars"].contains(tag)) << directory << ": " << tag;
    for (const auto& [tag, events] : run["scalars"].items()) {
      if (from_rows.count(tag)) continue;
      for (const auto& event : events) {
        const std::string key = tag + " " + std::to_string(event[0].get<std::int64_t>());
        ASSERT_TRUE(stored.by_name_and_step.count(key)) << directory << ": " << key << " is not in the store";
        const double value = stored.by_name_and_step.at(key);
        EXPECT_NEAR(event[1].get<double>(), value, std::abs(value) * 1e-6 + 1e-30) << key << " (a 32-bit float)";
        EXPECT_GT(event[2].get<double>(), 1.7e9) << key << ": the wall time it was recorded";
        ++scalars;
      }
    }
    EXPECT_EQ(scalars, stored.rows) << directory << ": every stored value, once";
    EXPECT_TRUE(run["scalars"].contains("train/loss") && run["scalars"].contains("eval/top1")) << run.dump();
    EXPECT_EQ(run["scalars"]["eval/top1"].size(), 2u) << "one per epoch";
  }
}

}  // namespace
}  // namespace orchestrate::testing
