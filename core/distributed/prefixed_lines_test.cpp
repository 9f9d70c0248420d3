#include "distributed/prefixed_lines.h"

#include <gtest/gtest.h>

#include <sstream>

namespace orchestrate {
namespace {

TEST(PrefixedLines, WholeLinesFromArbitraryChunks) {
  std::ostringstream out;
  PrefixedLines lines("[rank 1] ", out);
  lines.write("al");
  EXPECT_EQ(out.str(), "");
  lines.write("pha\nbeta\ngam");
  EXPECT_EQ(out.str(), "[rank 1] alpha\n[rank 1] beta\n");
  lines.write("ma\n\n");
  EXPECT_EQ(out.str(), "[rank 1] alpha\n[rank 1] beta\n[rank 1] gamma\n[rank 1] \n");
}

TEST(PrefixedLines, FinishEndsAnUnfinishedLine) {
  std::ostringstream out;
  PrefixedLines lines("[rank 0] ", out);
  lines.write("no newline");
  lines.finish();
  lines.finish();
  EXPECT_EQ(out.str(), "[rank 0] no newline\n");
}

TEST(PrefixedLines, AnEndlessLineIsCutIntoBoundedPieces) {
  std::ostringstream out;
  PrefixedLines lines("> ", out);
  lines.write(std::string(PrefixedLines::kMaxLine + 5, 'x'));
  EXPECT_EQ(out.str(), "> " + std::string(PrefixedLines::kMaxLine, 'x') + "\n");
  lines.write("y\n");
  EXPECT_EQ(out.str(), "> " + std::string(PrefixedLines::kMaxLine, 'x') + "\n> xxxxxy\n");
}

}  // namespace
}  // namespace orchestrate
