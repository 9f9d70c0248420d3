// The gradient compression contract.
// Part of share/doc/design.md's promise that each kind has a conformance test
// every plugin of that kind passes; run on the components conformance_plugins.h
// selected (`orchestrate conformance`).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "orchestrate/gradient_compression.h"

#include "conformance/conformance_plugins.h"
#include "conformance/optimizer_groups.h"

namespace {

using orchestrate::ComponentKind;
using namespace orchestrate::conformance;  // registry(), selected_names(), params_for(), ...

class CompressionConformance : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CompressionConformance);

// The messages the host exchanges (gradient_compression.h's contract): one
// per parameter, float32 values, indices in range and distinct, as many
// values whatever the gradients; state_dict() restores into a fresh compressor,
// which then sends exactly what the first one sends. A factory that returns
// no compressor asks for the dense all-reduce; there is nothing else to check.
TEST_P(CompressionConformance, MessagesFollowTheContractAndStateRoundTrips) {
  const auto& entry = registry().gradient_compressors().get(GetParam());
  auto weights = at::zeros({16, 8}).requires_grad_();
  auto bias = at::zeros({8}).requires_grad_();
  const orchestrate::CompressionContext context{two_groups(weights, bias).groups, 2, 10};
  const auto params = params_for(ComponentKind::gradient_compression, GetParam());
  auto first = entry.create(params, context);
  if (!first) return;  // "none": the dense all-reduce
  std::map<std::string, at::Tensor> metrics;
  auto compress = [&](orchestrate::GradientCompressor& compressor, std::int64_t update, std::uint64_t seed) {
    weights.mutable_grad() = at::randn({16, 8}).mul(static_cast<double>(seed) + 1.0);
    bias.mutable_grad() = at::randn({8}).mul(static_cast<double>(seed));
    return compressor.compress(orchestrate::CompressionStep{update, update / 10.0, metrics});
  };
  const std::vector<std::int64_t> numel{weights.numel(), bias.numel()};
  std::vector<std::int64_t> counts;
  for (std::int64_t update = 0; update < 4; ++update) {
    const auto messages = compress(*first, update, static_cast<std::uint64_t>(update));
    ASSERT_EQ(messages.size(), 2u) << "one message per parameter";
    for (std::size_t i = 0; i < messages.size(); ++i) {
      const auto& m = messages[i];
      ASSERT_TRUE(m.values.defined());
      EXPECT_EQ(m.values.scalar_type(), at::kFloat);
      EXPECT_EQ(m.values.dim(), 1);
      if (!m.indices.defined()) {
        EXPECT_EQ(m.values.numel(), numel[i]) << "values without indices are the whole gradient";
        continue;
      }
      EXPECT_TRUE(m.indices.scalar_type() == at::kLong || m.indices.scalar_type() == at::kInt);
      ASSERT_EQ(m.indices.numel(), m.values.numel());
      const auto positions = m.indices.to(at::kLong);
      EXPECT_GE(positions.min().item<std::int64_t>(), 0);
      EXPECT_LT(positions.max().item<std::int64_t>(), numel[i]);
      EXPECT_EQ(std::get<0>(at::_unique(positions)).numel(), positions.numel()) << "an index sent twice";
    }
    if (update == 1) counts = {messages[0].values.numel(), messages[1].values.numel()};
  }
  // Another rank, other gradients, the same update: the same message sizes.
  auto other = entry.create(params, context);
  compress(*other, 0, 7);
  const auto at_one = compress(*other, 1, 9);
  EXPECT_EQ(at_one[0].values.numel(), counts[0]);
  EXPECT_EQ(at_one[1].values.numel(), counts[1]);

  auto resumed = entry.create(params, context);
  std::map<std::string, at::Tensor> saved;
  for (const auto& [name, tensor] : first->state_dict()) saved[name] = tensor.clone();
  resumed->load_state_dict(saved);
  weights.mutable_grad() = at::randn({16, 8});
  bias.mutable_grad() = at::randn({8});
  const auto a = first->compress(orchestrate::CompressionStep{4, 0.4, metrics});
  const auto b = resumed->compress(orchestrate::CompressionStep{4, 0.4, metrics});
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(a[i].values.equal(b[i].values)) << "parameter " << i << " after load_state";
    EXPECT_EQ(a[i].indices.defined(), b[i].indices.defined());
    if (a[i].indices.defined()) EXPECT_TRUE(a[i].indices.equal(b[i].indices));
  }
  for (const auto& [name, value] : metrics) {
    EXPECT_EQ(name.rfind("train/", 0), 0u) << name << ": compressor metrics are train/*";
    EXPECT_EQ(value.dim(), 0) << name << ": a metric is a 0-dim tensor";
  }
}

INSTANTIATE_TEST_SUITE_P(All, CompressionConformance,
                         testing::ValuesIn(selected_names(ComponentKind::gradient_compression)), name_of_param);

}  // namespace
