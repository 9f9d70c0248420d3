// --sync-debug's scope: ATen's sync-debug mode is set only around steady
// steps of a CUDA run and put back after; a CPU run says it is not checked.
// (Whether a GPU step really never waits is gpu_checks' `nosync`.)
#include "engine/train/sync_check.h"

#include <c10/cuda/CUDAFunctions.h>
#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include "engine/recipe/settings.h"
#include "orchestrate/error.h"

namespace orchestrate {
namespace {

c10::cuda::SyncDebugMode mode_now() { return c10::cuda::warning_state().get_sync_debug_mode(); }

// The process's first updates, whatever their number in the run (a
// --resume starts at its checkpoint's): they tune cuDNN, capture the graph
// and move restored state to the device, each of which waits once.
void run_unchecked_first_updates(SyncCheck& check, std::int64_t first_update) {
  for (std::int64_t u = first_update; u < first_update + kEagerUpdatesBeforeCapture + 1; ++u) {
    const SyncCheck::Scope not_steady(check, u);
    EXPECT_EQ(mode_now(), c10::cuda::SyncDebugMode::L_DISABLED) << "update " << u << " of the process";
  }
}

TEST(SyncCheck, ChecksOnlySteadyStepsOfACudaRunAndPutsTheModeBack) {
  for (const std::int64_t first_update : {1, 101}) {  // a new run, and one resumed from update 100
    SyncCheck check(SyncDebug::error, c10::Device(c10::kCUDA, 0));
    EXPECT_EQ(check.not_checked(), "");
    run_unchecked_first_updates(check, first_update);
    {
      const SyncCheck::Scope steady(check, first_update + kEagerUpdatesBeforeCapture + 1);
      EXPECT_EQ(mode_now(), c10::cuda::SyncDebugMode::L_ERROR);
    }
    EXPECT_EQ(mode_now(), c10::cuda::SyncDebugMode::L_DISABLED) << "the update's end reads the device on purpose";
  }

  SyncCheck warning(SyncDebug::warn, c10::Device(c10::kCUDA, 0));
  run_unchecked_first_updates(warning, 1);
  {
    const SyncCheck::Scope steady(warning, 100);
    EXPECT_EQ(mode_now(), c10::cuda::SyncDebugMode::L_WARN);
  }
  EXPECT_EQ(mode_now(), c10::cuda::SyncDebugMode::L_DISABLED);
}

// ATen's own check fires inside a steady step: the run's failure names the
// update (warn_or_error_on_sync is what ATen's syncing calls run first).
TEST(SyncCheck, AStepThatWaitedIsNamedWithItsUpdate) {
  SyncCheck check(SyncDebug::error, c10::Device(c10::kCUDA, 0));
  EXPECT_EQ(check.named("called a synchronizing CUDA operation"), "") << "no checked step failed yet";
  std::string reason;
  run_unchecked_first_updates(check, 1);
  try {
    const SyncCheck::Scope steady(check, 7);
    c10::cuda::warn_or_error_on_sync();
    FAIL() << "ATen's check did not fire";
  } catch (const c10::Error& e) {
    reason = exception_reason(e);
  }
  EXPECT_EQ(mode_now(), c10::cuda::SyncDebugMode::L_DISABLED);
  EXPECT_EQ(check.named(reason), "--sync-debug error: update 7 waited for the device: " + reason);
  EXPECT_NE(reason.find("called a synchronizing CUDA operation"), std::string::npos) << reason;
  EXPECT_EQ(check.named("the data pipeline ended early"), "") << "other failures keep their own words";
}

TEST(SyncCheck, ACpuRunIsNotCheckedAndSaysSo) {
  SyncCheck check(SyncDebug::error, c10::Device(c10::kCPU));
  EXPECT_EQ(check.not_checked(), "--sync-debug checks CUDA runs only; this one trains on the cpu");
  const SyncCheck::Scope steady(check, 100);
  EXPECT_EQ(mode_now(), c10::cuda::SyncDebugMode::L_DISABLED);
  EXPECT_EQ(SyncCheck(SyncDebug::off, c10::Device(c10::kCUDA, 0)).not_checked(), "");
}

TEST(SyncCheck, OnlyWarnAndErrorAreModes) {
  EXPECT_EQ(parse_sync_debug("warn"), SyncDebug::warn);
  EXPECT_EQ(parse_sync_debug("error"), SyncDebug::error);
  try {
    parse_sync_debug("loud");
    FAIL() << "a bad mode was taken";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--sync-debug loud: unknown; use warn or error");
  }
}

}  // namespace
}  // namespace orchestrate
