#include "analysis/run_summary.h"

#include <gtest/gtest.h>

#include <sstream>

namespace orchestrate {
namespace {

ThroughputRow measured_row() {
  ThroughputRow row;
  row.run_id = 3;
  row.name = "fashion_mnist_convnet";
  row.steps = 3740;
  row.warmup_steps = 10;
  row.images_per_s = 2721.4;
  row.median_step_s = 0.0452;
  row.p95_step_s = 0.0611;
  row.data_wait_share = 0.31;
  row.compute_share = 0.52;
  row.optimizer_share = 0.12;
  row.wall_s = 176.2;
  row.setup_s = 1.9;
  row.train_s = 168.0;
  row.eval_s = 6.1;
  row.flops_per_image = 2.6e7;
  row.peak_flops_per_s = 2.0e11;
  return row;
}

TEST(RunSummary, EveryLineFitsInAHundredColumnsAndSaysWhatToDo) {
  Verdict verdict;
  verdict.limit = "input";
  verdict.evidence = "the model waited for batches 31 % of its training time (data wait 0.0140 s of a 0.0452 s "
                     "median step), more than the 20 % that limits a run";
  verdict.fixes = {"[run] num_workers = 2 (now 0; this host has 2 cores: decode the next batches while the model "
                   "trains on this one, in worker threads)",
                   "[data] cache_decoded = true (decodes each image once, then reads it from memory)"};
  const std::string summary =
      run_summary(measured_row(), verdict, "orchestrate report throughput 3 --db runs.db");
  std::istringstream lines(summary);
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count)
    EXPECT_LE(line.size(), kSummaryColumns) << line;
  EXPECT_GE(count, 8) << summary;
  for (const char* expected : {"throughput  2721 img/s (median step 0.0452 s, p95 0.0611 s, 3740 steps after 10 warm-up)",
                               "wall time   176.2 s: setup 1.9 s, training 168.0 s, evaluation 6.1 s",
                               "step time   data wait 31 %, forward and backward 52 %, optimizer 12 %",
                               "MFU         35.4 % of the measured peak (70.8 of 200.0 GFLOP/s)",
                               "limit       input-bound: the model waited", "try         [run] num_workers = 2",
                               "try         [data] cache_decoded = true",
                               "full report orchestrate report throughput 3 --db runs.db"})
    EXPECT_NE(summary.find(expected), std::string::npos) << expected << "\n" << summary;
  // A folded line continues under its text, not under the label.
  EXPECT_NE(summary.find("\n            "), std::string::npos) << summary;
}

// A job's achieved rate is over all its devices and the peak is one
// device's: "109.8 of 100.7 GFLOP/s" read as a rate above the peak.
TEST(RunSummary, AJobsMfuNamesHowManyDevicesThePeakIsTakenFor) {
  ThroughputRow row = measured_row();
  row.workers = 2;
  row.peak_flops_per_s = 0.5e11;
  const std::string summary = run_summary(row, Verdict{}, "orchestrate report throughput 3 --db runs.db");
  EXPECT_NE(summary.find("MFU         70.8 % of the measured peak (70.8 of 2 x 50.0 GFLOP/s)"), std::string::npos)
      << summary;
  row.rank = "1";  // one rank's row: its own device
  EXPECT_NE(run_summary(row, Verdict{}, "").find("(70.8 of 50.0 GFLOP/s)"), std::string::npos);
}

TEST(RunSummary, ARunWithoutMeasuredStepsSaysSo) {
  ThroughputRow row;
  row.warmup_steps = 2;
  const std::string summary = run_summary(row, Verdict{}, "orchestrate report throughput 1");
  EXPECT_EQ(summary, "throughput  no measured steps (the first 2 are warm-up)\n"
                     "full report orchestrate report throughput 1\n");
}

TEST(RunSummary, FoldKeepsAWordLongerThanTheLineWhole) {
  EXPECT_EQ(fold("a bb ccc", 4, "  "), "a bb\n  ccc");
  EXPECT_EQ(fold("/a/very/long/path x", 5, ""), "/a/very/long/path\nx");
}

}  // namespace
}  // namespace orchestrate
