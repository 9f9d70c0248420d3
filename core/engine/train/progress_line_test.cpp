#include "progress_line.h"

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

TEST(ProgressLine, NeverModePrintsNothingButMessages) {
  std::ostringstream out;
  ProgressLine progress(out, ProgressMode::never, 1, false);
  progress.update({1, 1, 1, 1, 0.5, 0.01}, 32);
  progress.message("eval after epoch 1");
  EXPECT_EQ(out.str(), "eval after epoch 1\n");
}

}  // namespace
}  // namespace orchestrate
