// Trains the demo recipe's ConvNet on the real Fashion-MNIST (Debian's
// dataset-fashion-mnist) for one epoch and checks what a user relies on:
// the accuracy reached and the rows written to the run store.
#include <gtest/gtest.h>

#include "command_runner.h"
#include "run_store.h"

namespace orchestrate::testing {
namespace {

TEST(FashionMnistTraining, OneEpochOfConvNetReachesAccuracyAndIsRecorded) {
  ScratchDir dir;
  const auto db = dir.file("runs.db");
  auto result = run_orchestrate(std::string("run ") + ORCHESTRATE_SOURCE_DIR +
                                "/recipes/fashion_mnist.toml --set run.epochs=1 --set run.batch_size=128 --db " + db +
                                " --quiet");
  ASSERT_EQ(result.exit_code, 0) << result.output;

  RunStore store(db);
  auto run = store.find_run("fashion_mnist_convnet");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "finished");
  // Measured 0.841 after this epoch on a 2-core CPU; plain chance is 0.10.
  EXPECT_GE(run->final_metrics.at("eval/top1"), 0.82) << result.output;
  EXPECT_GE(run->final_metrics.at("eval/top5"), 0.99) << result.output;
  EXPECT_EQ(store.step_timings(run->id).size(), 60000u / 128u);  // full batches of one epoch
  EXPECT_NE(result.output.find("eval/top1"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace orchestrate::testing
