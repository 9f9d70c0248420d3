#include "engine/train/progress_line.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

namespace orchestrate {
namespace {

TEST(ProgressLine, FormatsDurations) {
  EXPECT_EQ(ProgressLine::format_duration(0), "0:00");
  EXPECT_EQ(ProgressLine::format_duration(65.4), "1:05");
  EXPECT_EQ(ProgressLine::format_duration(3723), "1:02:03");
  EXPECT_EQ(ProgressLine::format_duration(-1), "?");
}

TEST(ProgressLine, PrintsOneLinePerLogIntervalWhenNotATerminal) {
  std::ostringstream out;
  ProgressLine progress(out, ProgressMode::auto_detect, /*log_every=*/5, /*out_is_terminal=*/false);
  for (std::int64_t step = 1; step <= 12; ++step) progress.update({1, 2, step, 12, 0.5, 0.01}, 32);
  progress.finish();
  const std::string text = out.str();
  // Steps 5, 10 and the last one (12).
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << text;
  EXPECT_NE(text.find("epoch 1/2  step 5/12  loss 0.5000  lr 0.01"), std::string::npos) << text;
  EXPECT_NE(text.find("step 12/12"), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << "no carriage returns in logs";
}

TEST(ProgressLine, TheFirstLineHasARealRateAndAnEta) {
  std::ostringstream out;
  ProgressLine progress(out, ProgressMode::auto_detect, /*log_every=*/1, /*out_is_terminal=*/false);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // a 30 ms step: far inside the half-second window
  progress.update({1, 1, 1, 100, 0.5, 0.01}, 32);
  const std::string line = out.str();
  EXPECT_EQ(line.find(" 0 img/s"), std::string::npos) << line;
  EXPECT_EQ(line.find("ETA 0:00"), std::string::npos) << line;  // 99 steps left of about 30 ms
}

// The ETA of the last line printed, in seconds ("ETA 1:02:03" or "ETA 4:05").
double last_eta_seconds(const std::string& text) {
  const auto at = text.rfind("ETA ");
  if (at == std::string::npos) return -1;
  double seconds = 0;
  std::istringstream fields(text.substr(at + 4, text.find('\n', at) - at - 4));
  for (std::string field; std::getline(fields, field, ':');) seconds = seconds * 60 + std::stod(field);
  return seconds;
}

// A clock the test moves by hand.
struct FakeClock {
  ProgressLine::Clock::time_point now{};
  void advance(double seconds) {
    now += std::chrono::duration_cast<ProgressLine::Clock::duration>(std::chrono::duration<double>(seconds));
  }
};

TEST(ProgressLine, TheEtaIsSmoothedSoOneStallOrAnEvaluationBarelyMovesIt) {
  FakeClock clock;
  std::ostringstream out;
  ProgressLine progress(out, ProgressMode::auto_detect, /*log_every=*/1, false, [&] { return clock.now; });
  const std::int64_t total = 1000;
  auto step = [&](std::int64_t at, double seconds) {
    clock.advance(seconds);
    progress.update({1, 1, at, total, 0.5, 0.01}, 32);
  };
  for (std::int64_t at = 1; at <= 50; ++at) step(at, 0.1);
  EXPECT_NEAR(last_eta_seconds(out.str()), 0.1 * 950, 0.1 * 950 * 0.1) << out.str();
  // One step stalls for 20 s (a page-cache miss, another job): the ETA had
  // jumped with the window's rate, to 20 s a step.
  step(51, 20);
  for (std::int64_t at = 52; at <= 60; ++at) step(at, 0.1);
  const double after_stall = last_eta_seconds(out.str());
  EXPECT_GT(after_stall, 0.1 * 940 * 0.9);
  EXPECT_LT(after_stall, 0.1 * 940 * 2) << "one stall moved the ETA from about 1:34 to " << after_stall << " s";
  // An evaluation of 30 s, announced by its result line, is not step time.
  for (std::int64_t at = 61; at <= 100; ++at) step(at, 0.1);
  clock.advance(30);
  progress.message("eval: top-1 0.5");
  for (std::int64_t at = 101; at <= 110; ++at) step(at, 0.1);
  EXPECT_NEAR(last_eta_seconds(out.str()), 0.1 * 890, 0.1 * 890 * 0.15) << out.str();
  // A lasting change of pace (the steps take twice as long) takes over within seconds.
  for (std::int64_t at = 111; at <= 200; ++at) step(at, 0.2);
  EXPECT_NEAR(last_eta_seconds(out.str()), 0.2 * 800, 0.2 * 800 * 0.1) << out.str();
}

TEST(ProgressLine, BeforeTheFirstLogPointTheLossIsADashNotZero) {
  // On CUDA the loss is read from the device only at log points: the first
  // redrawn line (step 1) had printed "loss 0.0000".
  std::ostringstream out;
  ProgressLine progress(out, ProgressMode::auto_detect, /*log_every=*/1, /*out_is_terminal=*/false);
  progress.update({1, 1, 1, 100, std::nullopt, 0.1}, 32);
  EXPECT_NE(out.str().find("step 1/100  loss -  lr 0.1"), std::string::npos) << out.str();
}

TEST(ProgressLine, AlwaysRedrawsInPlaceOffATerminal) {
  std::ostringstream out;
  ProgressLine progress(out, ProgressMode::always, /*log_every=*/5, /*out_is_terminal=*/false);
  progress.update({1, 1, 1, 1, 0.5, 0.01}, 32);
  progress.finish();
  EXPECT_EQ(out.str().rfind("\r\033[K", 0), 0u) << out.str();
}

// An evaluation of 10 batches of 32 images, each taking 4 s.
std::string evaluation_lines(bool out_is_terminal, ProgressMode mode = ProgressMode::auto_detect) {
  std::ostringstream out;
  FakeClock clock;
  ProgressLine progress(out, mode, /*log_every=*/5, out_is_terminal, [&] { return clock.now; });
  progress.evaluating("eval after epoch 2", 0, 10, 0);
  for (std::int64_t batch = 1; batch <= 10; ++batch) {
    clock.advance(4);
    progress.evaluating("eval after epoch 2", batch, 10, 32 * batch);
  }
  progress.message("eval after epoch 2 (step 40): top1 0.9000");
  return out.str();
}

TEST(ProgressLine, AnEvaluationShowsItsBatchesRateAndEta) {
  const std::string redrawn = evaluation_lines(/*out_is_terminal=*/true);
  EXPECT_NE(redrawn.find("\r\033[Keval after epoch 2  batch 1/10  8 img/s  ETA 0:36"), std::string::npos) << redrawn;
  EXPECT_NE(redrawn.find("batch 9/10  8 img/s  ETA 0:04"), std::string::npos) << redrawn;
  EXPECT_EQ(redrawn.find("batch 10/10"), std::string::npos) << "the result's line follows the last batch";
  EXPECT_NE(redrawn.find("\r\033[Keval after epoch 2 (step 40): top1 0.9000\n"), std::string::npos) << redrawn;
}

// Off a terminal a line every 30 s: at 32 s (batch 8), not one a batch.
TEST(ProgressLine, OffATerminalALongEvaluationPrintsALineEveryHalfMinute) {
  const std::string logged = evaluation_lines(/*out_is_terminal=*/false);
  EXPECT_EQ(logged,
            "eval after epoch 2  batch 8/10  8 img/s  ETA 0:08\n"
            "eval after epoch 2 (step 40): top1 0.9000\n");
  EXPECT_EQ(evaluation_lines(false, ProgressMode::never), "eval after epoch 2 (step 40): top1 0.9000\n");
}

TEST(ProgressLine, NeverModePrintsNothingButMessages) {
  std::ostringstream out;
  ProgressLine progress(out, ProgressMode::never, 1, false);
  progress.update({1, 1, 1, 1, 0.5, 0.01}, 32);
  progress.message("eval after epoch 1");
  EXPECT_EQ(out.str(), "eval after epoch 1\n");
}

}  // namespace
}  // namespace orchestrate
