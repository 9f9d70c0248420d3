#include "crash_report/crash_breadcrumb.h"

#include <gtest/gtest.h>

#include <fstream>

#include "orchestrate/input_limits.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate {
namespace {

std::string formatted(const CrashBreadcrumb& crumb, const std::string& message) {
  std::string buffer(limits::kMaxCrashBreadcrumbBytes + 100, '\0');
  buffer.resize(format_crash_breadcrumb(crumb, message.c_str(), buffer.data(), buffer.size()));
  return buffer;
}

TEST(CrashBreadcrumb, WhatTheHandlerWritesReadsBack) {
  const std::string text = formatted({7, 1, 4242, 11, ""}, "rank 1 crashed with SIGSEGV in plugin 'x', at step 3");
  EXPECT_EQ(text,
            "orchestrate-crash 1\nrun 7\nrank 1\npid 4242\nsignal 11\n"
            "message rank 1 crashed with SIGSEGV in plugin 'x', at step 3\n");
  const auto crumb = parse_crash_breadcrumb(text);
  ASSERT_TRUE(crumb);
  EXPECT_EQ(crumb->run_id, 7);
  EXPECT_EQ(crumb->rank, 1);
  EXPECT_EQ(crumb->pid, 4242);
  EXPECT_EQ(crumb->signal, 11);
  EXPECT_EQ(crumb->message, "rank 1 crashed with SIGSEGV in plugin 'x', at step 3");
}

TEST(CrashBreadcrumb, AMessageIsOneLineAndFitsTheLimit) {
  EXPECT_EQ(parse_crash_breadcrumb(formatted({1, 0, 5, 6, ""}, "first line\nsecond line"))->message, "first line");
  const std::string long_text = formatted({1, 0, 5, 6, ""}, std::string(100000, 'x'));
  EXPECT_LE(long_text.size(), limits::kMaxCrashBreadcrumbBytes);
  const auto cut = parse_crash_breadcrumb(long_text);
  ASSERT_TRUE(cut);
  EXPECT_GT(cut->message.size(), limits::kMaxCrashBreadcrumbBytes / 2);
}

TEST(CrashBreadcrumb, DamagedOrForeignBytesAreRefusedWithAReason) {
  const std::string good = formatted({3, 0, 9, 11, ""}, "crashed");
  std::string problem;
  EXPECT_FALSE(parse_crash_breadcrumb("", &problem));
  EXPECT_NE(problem.find("does not start with"), std::string::npos);
  EXPECT_FALSE(parse_crash_breadcrumb(good.substr(0, good.size() - 1), &problem));  // no final line end
  EXPECT_FALSE(parse_crash_breadcrumb(good + "more\n", &problem));
  EXPECT_NE(problem.find("after the message"), std::string::npos);
  std::string zero_run = good;
  zero_run.replace(zero_run.find("run 3"), 5, "run 0");
  EXPECT_FALSE(parse_crash_breadcrumb(zero_run, &problem));
  std::string huge_rank = good;
  huge_rank.replace(huge_rank.find("rank 0"), 6, "rank 99999999999999999999");
  EXPECT_FALSE(parse_crash_breadcrumb(huge_rank, &problem));
  EXPECT_FALSE(parse_crash_breadcrumb(std::string(limits::kMaxCrashBreadcrumbBytes + 1, 'a'), &problem));
  EXPECT_NE(problem.find("larger than"), std::string::npos);
}

TEST(CrashBreadcrumb, ControlCharactersInTheMessageAreShownAsQuestionMarks) {
  const std::string text = std::string("orchestrate-crash 1\nrun 2\nrank 0\npid 3\nsignal 6\nmessage a\x1b[2Jb\r\n");
  EXPECT_EQ(parse_crash_breadcrumb(text)->message, "a?[2Jb?");
}

TEST(CrashBreadcrumb, EachStoreFindsOnlyItsOwn) {
  testing::ScratchDir dir;
  const std::string store = dir.file("a.db"), other = dir.file("b.db");
  const auto leave = [](const std::string& path, const std::string& text) { std::ofstream(path) << text; };
  leave(crash_breadcrumb_path(store, 4, 0), formatted({4, 0, 10, 11, ""}, "crashed at step 3"));
  leave(crash_breadcrumb_path(store, 4, 1), "garbage");
  leave(crash_breadcrumb_path(other, 4, 0), formatted({4, 0, 11, 11, ""}, "the other store's"));
  EXPECT_EQ(crash_breadcrumb_path(store, 4, 1), dir.file("a.db-crash-run4-rank1"));

  const auto found = find_crash_breadcrumbs(store);
  ASSERT_EQ(found.size(), 2u);
  ASSERT_TRUE(found[0].crumb);
  EXPECT_EQ(found[0].crumb->message, "crashed at step 3");
  EXPECT_FALSE(found[1].crumb);
  EXPECT_NE(found[1].problem.find("does not start with"), std::string::npos);

  EXPECT_EQ(read_crash_breadcrumb(store, 4, 0)->message, "crashed at step 3");
  EXPECT_FALSE(read_crash_breadcrumb(store, 4, 1));  // damaged
  EXPECT_FALSE(read_crash_breadcrumb(store, 5, 0));  // none
  EXPECT_EQ(read_crash_breadcrumb(other, 4, 0)->message, "the other store's");
}

}  // namespace
}  // namespace orchestrate
