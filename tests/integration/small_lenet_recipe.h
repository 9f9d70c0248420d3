// A small recipe tests train: LeNet on 64 mock 28x28 images, batch 8, one
// thread, evaluation off. `run_keys` are added to [run],
// `optimizer` is the plugin of [optimizer] (lr 0.01), and `tables` follow.
#pragma once

#include <string>

namespace orchestrate::testing {

inline std::string small_lenet_recipe(const std::string& run_keys, const std::string& optimizer,
                                      const std::string& tables) {
  return R"(schema_version = 1
[run]
batch_size = 8
threads = 1
)" + run_keys + R"([data]
plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 64
test_size = 16
[model]
plugin = "lenet"
[optimizer]
plugin = ")" + optimizer + R"("
lr = 0.01
[eval]
enabled = false
)" + tables;
}

}  // namespace orchestrate::testing
