#include "crash_report/crash_handler.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>

#include "crash_report/crash_breadcrumb.h"
#include "crash_report/plugin_call.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate {
namespace {

int* volatile null_pointer = nullptr;  // volatile: the compiler cannot see it is null and drop the store

TEST(CrashDescription, NamesTheCallAndTheStep) {
  const PluginCallSite site{"null_hook", "hook 'null_deref'"};
  note_training_step(3);
  {
    const PluginCallScope scope(site, "after_update");
    const std::string line = crash_description(SIGSEGV, 0);
    EXPECT_NE(line.find("crashed with SIGSEGV"), std::string::npos) << line;
    EXPECT_NE(line.find("during hook 'null_deref' after_update of plugin 'null_hook'"), std::string::npos) << line;
    EXPECT_NE(line.find(", at step 3;"), std::string::npos) << line;
    EXPECT_NE(line.find("report it to its author"), std::string::npos) << line;
  }
  const std::string outside = crash_description(SIGABRT, 0);
  EXPECT_NE(outside.find("outside any plugin"), std::string::npos) << outside;
  EXPECT_NE(outside.find("a bug in orchestrate or LibTorch"), std::string::npos) << outside;
  note_training_step(0);
}

TEST(CrashDescription, ScopesNestAndUnwind) {
  const PluginCallSite dataset{"mock", "dataset 'mock'"}, wrapper{"subset", "dataset 'subset'"};
  const PluginCallScope outer(wrapper, "example");
  {
    const PluginCallScope inner(dataset, "example");
    EXPECT_EQ(current_plugin_call(), &inner);
  }
  EXPECT_EQ(current_plugin_call(), &outer);
  EXPECT_NE(crash_description(SIGSEGV, 0).find("dataset 'subset' example"), std::string::npos);
}

// The real thing, in a child process: the line on stderr, the breadcrumb,
// and death by the same signal.
void crash_in_a_hook(const std::string& store) {
  install_crash_handler();
  const PluginCallSite site{"null_hook", "hook 'null_deref'"};
  const CrashBreadcrumbTarget target(store, 12, 0, 1);
  note_training_step(3);
  const PluginCallScope scope(site, "after_update");
  *null_pointer = 1;
}

TEST(CrashHandlerDeathTest, ASegfaultInAPluginCallIsNamedAndLeavesABreadcrumb) {
  GTEST_FLAG_SET(death_test_style, "fast");  // the child writes where this process looks
  testing::ScratchDir dir;
  const std::string store = dir.file("runs.db");
  EXPECT_EXIT(crash_in_a_hook(store), ::testing::KilledBySignal(SIGSEGV),
              "orchestrate: crashed with SIGSEGV \\(invalid memory access\\) during hook 'null_deref' after_update "
              "of plugin 'null_hook', at step 3; the plugin has a bug");
  const auto crumb = read_crash_breadcrumb(store, 12, 0);
  ASSERT_TRUE(crumb) << "no breadcrumb at " << crash_breadcrumb_path(store, 12, 0);
  EXPECT_EQ(crumb->signal, SIGSEGV);
  EXPECT_EQ(crumb->message.rfind("crashed with SIGSEGV", 0), 0u) << crumb->message;
  EXPECT_NE(crumb->message.find("at step 3"), std::string::npos);
}

void abort_on_a_data_rank(const std::string& store) {
  install_crash_handler();
  const PluginCallSite site{"bad_data", "dataset 'bad_data'"};
  const CrashBreadcrumbTarget target(store, 5, 1, 2);
  const PluginCallScope scope(site, "example");
  std::abort();
}

TEST(CrashHandlerDeathTest, AnAbortNamesTheRankOfAJob) {
  GTEST_FLAG_SET(death_test_style, "fast");  // the child writes where this process looks
  testing::ScratchDir dir;
  const std::string store = dir.file("runs.db");
  EXPECT_EXIT(abort_on_a_data_rank(store), ::testing::KilledBySignal(SIGABRT),
              "orchestrate: rank 1 crashed with SIGABRT .* during dataset 'bad_data' example of plugin 'bad_data'");
  const auto crumb = read_crash_breadcrumb(store, 5, 1);
  ASSERT_TRUE(crumb);
  EXPECT_EQ(crumb->rank, 1);
  EXPECT_EQ(crumb->message.rfind("rank 1 crashed with SIGABRT", 0), 0u) << crumb->message;
}

}  // namespace
}  // namespace orchestrate
