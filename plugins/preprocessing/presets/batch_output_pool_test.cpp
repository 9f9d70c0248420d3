// BatchOutputPool: a finished batch's memory is reused only once no one
// holds the batch or a view of it, and reuse never shows old values.
#include "orchestrate/presets/batch_output_pool.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace orchestrate {
namespace {

const at::TensorOptions kFloats = at::TensorOptions().dtype(at::kFloat);

TEST(BatchOutputPool, ReusesATensorOnlyOnceNoOneHoldsItOrAView) {
  BatchOutputPool pool;
  auto first = pool.take({2, 3, 4, 4}, kFloats);
  const void* memory = first.data_ptr();
  EXPECT_NE(pool.take({2, 3, 4, 4}, kFloats).data_ptr(), memory) << "handed out while held";
  auto view = first.select(1, 2);
  first = at::Tensor();
  EXPECT_NE(pool.take({2, 3, 4, 4}, kFloats).data_ptr(), memory) << "handed out while a view was held";
  view = at::Tensor();
  EXPECT_EQ(pool.take({2, 3, 4, 4}, kFloats).data_ptr(), memory) << "not reused once free";
  EXPECT_NE(pool.take({1, 3, 4, 4}, kFloats).data_ptr(), memory) << "reused for another shape";
}

TEST(BatchOutputPool, KeepsNoMoreThanItsBoundAndNothingOffTheCpu) {
  BatchOutputPool pool(3);
  std::vector<at::Tensor> held;
  for (int i = 0; i < 5; ++i) held.push_back(pool.take({8}, kFloats));
  EXPECT_EQ(pool.kept(), 3u);
  held.clear();
  EXPECT_EQ(pool.take({16}, kFloats).numel(), 16) << "a free tensor of another shape makes room";
  EXPECT_EQ(pool.kept(), 3u);
  if (at::hasCUDA()) {
    BatchOutputPool device_pool;
    (void)device_pool.take({8}, kFloats.device(at::kCUDA));
    EXPECT_EQ(device_pool.kept(), 0u);
  }
}

// Threads that take, write a value and check it while others do the same
// never see one tensor handed to two of them.
TEST(BatchOutputPool, NeverHandsOneTensorToTwoThreads) {
  BatchOutputPool pool(4);
  std::vector<std::thread> threads;
  std::atomic<int> clashes{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        auto mine = pool.take({64}, kFloats);
        mine.fill_(static_cast<float>(t));
        std::this_thread::yield();
        if (!mine.eq(static_cast<float>(t)).all().item<bool>()) ++clashes;
      }
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(clashes.load(), 0);
}

}  // namespace
}  // namespace orchestrate
