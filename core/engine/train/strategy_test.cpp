// The strategy decides what a world size would otherwise decide in the step
// loop. Alone, a stop is taken at once, even between micro-batches, and the
// rows are this process's; in a data-parallel job (here a real Gloo job of
// one rank) only what the ranks agreed on counts, one update after it was sent.
#include "engine/train/strategy.h"

#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include <ATen/ATen.h>

#include "distributed/collective.h"
#include "distributed/free_tcp_port.h"
#include "store/run_store_test_support.h"

namespace orchestrate {
namespace {

struct Fixture {
  testing::ScratchRun run;
  CheckpointSettings every_instant = [] {
    CheckpointSettings s;
    s.save_interval_secs = 1e-9;  // the clock always asks
    return s;
  }();
  Checkpointer checkpointer{every_instant, run.dir.file("ck"), run.recorder};
  at::Tensor weight = at::ones({2}).requires_grad_();
  bool stop_here = false;

  std::unique_ptr<Strategy> make(Collective* collective) {
    return make_strategy(collective, std::make_unique<GradientSync>(collective, std::vector{weight}, nullptr, "", 25.0),
                         [this] { return stop_here; });
  }
};

TEST(Strategy, AloneAStopIsTakenAtOnceAndTheRowsAreThisProcesss) {
  Fixture f;
  auto alone = f.make(nullptr);
  EXPECT_TRUE(alone->leader());
  EXPECT_EQ(alone->world_size(), 1);
  EXPECT_FALSE(alone->stop_before_update());
  f.stop_here = true;
  EXPECT_TRUE(alone->stop_before_update());
  EXPECT_TRUE(alone->stop_between_micro_batches()) << "alone, a signal stops between micro-batches too";
  const auto loss = at::scalar_tensor(2.5);
  EXPECT_TRUE(alone->agree_on_update(loss, f.checkpointer).equal(loss));
  EXPECT_TRUE(alone->save_by_time(f.checkpointer));
  EXPECT_EQ(alone->images_in_row(32), 32);
  EXPECT_FALSE(alone->sum_across_ranks()) << "an evaluation alone sums nothing across ranks";
}

TEST(Strategy, InAJobOnlyWhatTheRanksAgreedOnStopsOrSaves) {
  Fixture f;
  LaunchEnvironment environment;
  environment.rank = 0;
  environment.world_size = 1;
  environment.local_world_size = 1;
  environment.master_port = pick_free_tcp_port("127.0.0.1");
  environment.launcher = "test";
  Collective collective(environment, c10::kCPU, CollectiveOptions{});
  auto job = f.make(&collective);
  EXPECT_TRUE(job->leader());
  f.stop_here = true;
  EXPECT_FALSE(job->stop_before_update()) << "nothing agreed yet";
  EXPECT_FALSE(job->stop_between_micro_batches()) << "a job's ranks never stop inside an update";
  EXPECT_FALSE(job->save_by_time(f.checkpointer)) << "rank 0's wish counts once agreed";
  // The flags travel one update late, so reading them never waits for the device.
  const auto mean = job->agree_on_update(at::scalar_tensor(3.0F), f.checkpointer);
  EXPECT_FLOAT_EQ(mean.item<float>(), 3.0F) << "the loss is this update's";
  EXPECT_FALSE(job->stop_before_update()) << "sent at this update, acted on at the next";
  EXPECT_FALSE(job->save_by_time(f.checkpointer));
  EXPECT_FLOAT_EQ(job->agree_on_update(at::scalar_tensor(5.0F), f.checkpointer).item<float>(), 5.0F);
  EXPECT_TRUE(job->stop_before_update());
  EXPECT_TRUE(job->save_by_time(f.checkpointer));
  job->agree_on_update(at::scalar_tensor(5.0F), f.checkpointer);
  EXPECT_FALSE(job->save_by_time(f.checkpointer)) << "the clock's save is made once, not at two updates in a row";
  EXPECT_TRUE(job->stop_before_update());
  auto sums = at::full({2}, 4.0);
  job->sum_across_ranks()(sums);
  EXPECT_TRUE(sums.equal(at::full({2}, 4.0))) << "one rank's sums are the job's";
}

}  // namespace
}  // namespace orchestrate
