#include "engine/dim_reduce/trajectory_pca.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <sstream>

#include "checkpoint/safetensors.h"
#include "orchestrate/error.h"
#include "orchestrate/testing/python_reference.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate {
namespace {

// A trajectory like stage 1's: 40 snapshots of 500 weights that drift along
// three directions of decreasing size, plus a little noise.
at::Tensor drifting_trajectory() {
  at::manual_seed(7);
  const auto steps = at::linspace(0, 1, 40, at::kDouble).unsqueeze(1);
  const auto directions = at::randn({3, 500}, at::kDouble);
  const auto path = at::cat({steps * 5.0, at::sin(steps * 6.0) * 2.0, steps.square() * 0.5}, 1);  // [40, 3]
  return (at::randn({500}, at::kDouble) + at::matmul(path, directions) + 0.01 * at::randn({40, 500}, at::kDouble))
      .to(at::kFloat);
}

// numpy's SVD of the same centred snapshots, signs fixed the same way: the
// components and the variance shares agree.
TEST(TrajectoryPcaTest, MatchesNumpysSvdOfTheCentredSnapshots) {
  testing::ScratchDir dir;
  const auto snapshots = drifting_trajectory();
  const auto file = dir.file("trajectory.safetensors");
  write_safetensors(file, {{{"snapshots", snapshots}}, {}});
  const auto pca = trajectory_pca(snapshots, 4, "the test trajectory");

  const std::string printed = testing::run_python(R"(
import numpy as np
from safetensors.numpy import load_file
x = load_file(")" + file + R"(")["snapshots"].astype(np.float64)
x -= x.mean(axis=0, keepdims=True)
_, s, vh = np.linalg.svd(x, full_matrices=False)
vh = vh[:4] * np.sign(vh[:4][np.arange(4), np.abs(vh[:4]).argmax(axis=1)])[:, None]
print(" ".join(repr(float(v)) for v in np.concatenate([(s**2 / (s**2).sum())[:4], vh.ravel()])))
)");
  std::istringstream in(printed);
  std::vector<double> reference;
  for (double value; in >> value;) reference.push_back(value);
  ASSERT_EQ(reference.size(), 4u + 4u * 500u) << printed;
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(pca.explained_variance_ratio[i].item<double>(), reference[i], 1e-5) << "component " << i;
  const auto expected = at::tensor(std::vector<double>(reference.begin() + 4, reference.end())).reshape({4, 500});
  // The fourth direction is noise (singular values close together): compare the three real ones tightly.
  EXPECT_LT((pca.components.narrow(0, 0, 3).to(at::kDouble) - expected.narrow(0, 0, 3)).abs().max().item<double>(), 1e-4);
  EXPECT_GT(pca.explained_variance_ratio.narrow(0, 0, 3).sum().item<double>(), 0.99)
      << "three directions carry the drift";
  const auto gram = at::matmul(pca.components, pca.components.t());
  EXPECT_TRUE(at::allclose(gram, at::eye(4), 1e-5, 1e-5)) << "orthonormal rows";
}

TEST(TrajectoryPcaTest, TooFewSnapshotsSayHowManyAreNeededAndHowToGetThem) {
  std::string message;
  try {
    trajectory_pca(at::randn({20, 50}), 32, "snapshots/run-3 (20 files)");
  } catch (const UsageError& error) {
    message = error.what();
  }
  EXPECT_NE(message.find("n_components = 32 needs at least 33 weight snapshots"), std::string::npos) << message;
  EXPECT_NE(message.find("snapshots/run-3 (20 files) has 20"), std::string::npos) << message;
  EXPECT_NE(message.find("[snapshots] keep"), std::string::npos) << message;
}

}  // namespace
}  // namespace orchestrate
