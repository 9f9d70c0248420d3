#include "progress_line.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

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

TEST(ProgressLine, NeverModePrintsNothingButMessages) {
  std::ostringstream out;
  ProgressLine progress(out, ProgressMode::never, 1, false);
  progress.update({1, 1, 1, 1, 0.5, 0.01}, 32);
  progress.message("eval after epoch 1");
  EXPECT_EQ(out.str(), "eval after epoch 1\n");
}

}  // namespace
}  // namespace orchestrate
