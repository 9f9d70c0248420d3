// What an error shows a user: a LibTorch error's first line without the C++
// backtrace c10::Error carries (ORCHESTRATE_DEBUG=1 keeps it), and a long
// list of problems cut to limits::kMaxErrorLines.
#include <gtest/gtest.h>

#include <c10/util/Exception.h>

#include <cstdlib>
#include <string>

#include "orchestrate/error.h"
#include "orchestrate/input_limits.h"

namespace orchestrate {
namespace {

std::string libtorch_error(bool debug) {
  if (debug)
    ::setenv("ORCHESTRATE_DEBUG", "1", 1);
  else
    ::unsetenv("ORCHESTRATE_DEBUG");
  try {
    TORCH_CHECK(false, "Kernel size can't be greater than actual input size");
  } catch (const std::exception& e) {
    const std::string reason = exception_reason(e);
    ::unsetenv("ORCHESTRATE_DEBUG");
    return reason;
  }
  return "";
}

TEST(ErrorDisplay, ALibTorchErrorIsItsFirstLineUnlessDebugging) {
  const std::string plain = libtorch_error(false);
  EXPECT_EQ(plain, "Kernel size can't be greater than actual input size");
  const std::string debug = libtorch_error(true);
  EXPECT_EQ(debug.rfind(plain, 0), 0u) << debug;
  EXPECT_NE(debug.find("Exception raised from"), std::string::npos) << debug;
}

TEST(ErrorDisplay, AWrappedBacktraceIsCutAndLongListsAreCounted) {
  ::unsetenv("ORCHESTRATE_DEBUG");
  try {
    TORCH_CHECK(false, "shape mismatch");
  } catch (const std::exception& e) {
    // What a plugin does with it: wraps the whole what() into its own error.
    const std::string shown = error_for_display(std::string("[model] mine: ") + e.what());
    EXPECT_EQ(shown, "[model] mine: shape mismatch");
  }
  std::string many;
  for (int i = 0; i < 200; ++i) many += (i ? "\n" : "") + std::string("r.toml:") + std::to_string(i + 1) + ": bad";
  const std::string shown = error_for_display(many);
  std::size_t lines = 0;
  for (const char c : shown) lines += c == '\n';
  EXPECT_EQ(lines, limits::kMaxErrorLines);
  EXPECT_NE(shown.find("\nr.toml:20: bad\n... and 180 more (the first 20 are shown)"), std::string::npos) << shown;
  EXPECT_EQ(error_for_display("one line"), "one line");
}

}  // namespace
}  // namespace orchestrate
