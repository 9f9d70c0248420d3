#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <map>
#include <string>

#include "../common/wrapper_test_support.h"
#include "orchestrate/error.h"
#include "orchestrate/optimizer_wrapper.h"

namespace {

using namespace orchestrate::testing;

const auto& batch_gradients_entry() { return plugin_under_test().optimizer_wrappers().get("batch_gradients"); }

orchestrate::Params with_num_batches(std::int64_t num_batches) {
  orchestrate::Params params;
  params.set("num_batches", num_batches);
  return params;
}

TEST(BatchGradients, DeclaresAnAccumulatorThatComesFirst) {
  const auto& rules = batch_gradients_entry().meta;
  EXPECT_TRUE(rules.must_come_first);
  EXPECT_FALSE(rules.must_come_last);
  EXPECT_TRUE(rules.exclusive_group.empty());
  EXPECT_FALSE(rules.takes_over_weight_decay);
  ASSERT_TRUE(rules.micro_batches);
  EXPECT_EQ(rules.micro_batches(with_num_batches(8)), 8);  // the seed's 32k recipe: 8 micro-batches per update
  EXPECT_EQ(rules.micro_batches(with_num_batches(1)), 1);
}

TEST(BatchGradients, NumBatchesIsRequiredAndAtLeastOne) {
  const auto& schema = batch_gradients_entry().info.schema;
  const auto* num_batches = schema.find("num_batches");
  ASSERT_NE(num_batches, nullptr);
  EXPECT_EQ(num_batches->type, orchestrate::ParamType::integer);
  EXPECT_TRUE(num_batches->required());
  EXPECT_EQ(num_batches->check(std::int64_t{1}), "");
  EXPECT_NE(num_batches->check(std::int64_t{0}), "");
  EXPECT_EQ(schema.names().size(), 1u);
  EXPECT_THROW(orchestrate::default_params(schema), orchestrate::Error);
}

// The host accumulates; at step time the wrapper leaves gradients and weights
// exactly as the base optimizer would have them.
TEST(BatchGradients, DoesNothingAtStepTime) {
  auto w = at::tensor({1.0, -2.0}, at::kDouble).requires_grad_();
  orchestrate::WrapperContext context;
  context.groups.push_back(parameter_group("decay", {w}, 0.0, false));
  auto optimizer = base_optimizer_without_decay<torch::optim::SGD>(context, torch::optim::SGDOptions(0.5));
  auto wrapper = batch_gradients_entry().create(with_num_batches(4), context);
  w.mutable_grad() = at::tensor({0.2, 0.4}, at::kDouble);
  const auto metrics = run_update(*wrapper, *optimizer);
  EXPECT_TRUE(metrics.empty());
  EXPECT_TRUE(at::equal(w.grad(), at::tensor({0.2, 0.4}, at::kDouble)));
  EXPECT_TRUE(at::allclose(w, at::tensor({0.9, -2.2}, at::kDouble), 0, 1e-15));
}

}  // namespace
