// The collective engine and the gradient reducer across real processes: the
// test binary starts copies of itself as the workers of a 2-rank job on the
// loopback interface (`--worker SCENARIO RANK WORLD PORT DIR`), and checks
// their exit codes, their messages and the gradients they write.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <torch/nn/modules/linear.h>
#include <torch/serialize.h>

#include <ATen/ops/arange.h>
#include <ATen/ops/cross_entropy_loss.h>
#include <ATen/ops/full.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "distributed/collective.h"
#include "distributed/gradient_reducer.h"
#include "orchestrate/error.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate::testing {
namespace {

constexpr int kWorld = 2;
constexpr std::int64_t kMicroBatch = 4;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  const int port = ntohs(address.sin_port);
  ::close(fd);
  return port;
}

LaunchEnvironment environment(int rank, int world, int port) {
  LaunchEnvironment env;
  env.rank = rank;
  env.world_size = world;
  env.local_rank = rank;
  env.local_world_size = world;
  env.master_port = port;
  env.launcher = "test";
  return env;
}

// A small two-layer network with the same initial weights on every rank, and
// one more parameter the forward pass never uses.
struct TinyNet : torch::nn::Module {
  TinyNet() {
    torch::manual_seed(7);
    first = register_module("first", torch::nn::Linear(6, 5));
    second = register_module("second", torch::nn::Linear(5, 3));
    unused = register_parameter("unused", torch::randn({4}));
  }
  at::Tensor forward(const at::Tensor& x) { return second->forward(torch::relu(first->forward(x))); }
  torch::nn::Linear first{nullptr}, second{nullptr};
  at::Tensor unused;
};

// Micro-batch `m` of rank `rank`: its own examples, reproducible anywhere.
std::pair<at::Tensor, at::Tensor> micro_batch(int rank, int m) {
  torch::manual_seed(1000 + 10 * rank + m);
  return {at::randn({kMicroBatch, 6}), at::randint(0, 3, {kMicroBatch}, at::kLong)};
}

std::string grads_file(const std::string& dir, int rank) { return dir + "/grads_" + std::to_string(rank) + ".pt"; }

// Two micro-batches per update (accumulation: only the second communicates),
// buckets of 64 bytes so that the net spreads over several.
int reducer_worker(Collective& collective, const std::string& dir) {
  TinyNet net;
  GradientReducer reducer(collective, net.parameters(), 64.0 / (1024 * 1024));
  if (reducer.bucket_count() < 3) throw Error("expected several buckets, got " + std::to_string(reducer.bucket_count()));
  for (int m = 0; m < 2; ++m) {
    reducer.set_communicating(m == 1);
    const auto [x, y] = micro_batch(collective.rank(), m);
    (at::cross_entropy_loss(net.forward(x), y) / 2.0).backward();
  }
  reducer.finish_reduction();
  std::vector<at::Tensor> grads;
  for (const auto& p : net.parameters()) grads.push_back(p.grad());
  torch::save(grads, grads_file(dir, collective.rank()));
  return 0;
}

int operations_worker(Collective& collective) {
  const int rank = collective.rank();
  auto sum = at::full({3}, static_cast<float>(rank + 1));
  collective.all_reduce_sum(sum);
  auto max = at::full({2}, static_cast<float>(10 * rank));
  collective.all_reduce_max(max);
  const auto gathered = collective.all_gather(at::arange(3, at::kLong) + 100 * rank);
  auto broadcast = rank == 1 ? at::full({2}, 7.0) : at::full({2}, -1.0);
  collective.broadcast(broadcast, 1);
  collective.barrier();
  const bool ok = sum.eq(3).all().item<bool>() && max.eq(10).all().item<bool>() && gathered.size() == 2 &&
                  gathered[1].equal(at::arange(3, at::kLong) + 100) && broadcast.eq(7).all().item<bool>();
  if (!ok) std::cerr << "wrong results on rank " << rank << ": " << sum << max << broadcast << "\n";
  return ok ? 0 : 1;
}

int run_worker(const std::string& scenario, int rank, int world, int port, const std::string& dir) {
  try {
    CollectiveOptions options;
    options.timeout = std::chrono::milliseconds(scenario == "ops" || scenario == "reducer" ? 30000 : 3000);
    Collective collective(environment(rank, world, port), c10::Device(c10::kCPU), options);
    if (scenario == "ops") return operations_worker(collective);
    if (scenario == "reducer") return reducer_worker(collective, dir);
    if (scenario == "dead_peer") {
      if (rank == 1) std::_Exit(9);  // dies without a word, as a crashed worker does
      auto tensor = at::ones({1000});
      collective.all_reduce_sum(tensor);
      return 0;
    }
    if (scenario == "alone") return 0;
    std::cerr << "unknown scenario " << scenario << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 3;
  }
}

struct WorkerResult {
  int exit_code = -1;
  std::string output;
};

// Starts the given ranks of a `world`-rank job and waits for them all.
std::vector<WorkerResult> run_job(const std::string& scenario, const std::vector<int>& ranks, int world,
                                  const ScratchDir& dir, double* seconds = nullptr) {
  const int port = free_port();
  std::string command;
  for (const int rank : ranks) {
    const std::string prefix = dir.file(scenario + "_" + std::to_string(rank));
    command += "( /proc/" + std::to_string(::getpid()) + "/exe --worker " + scenario + " " + std::to_string(rank) +
               " " + std::to_string(world) + " " + std::to_string(port) + " " + dir.path().string() + " > " + prefix +
               ".log 2>&1; echo $? > " + prefix + ".code ) & ";
  }
  command += "wait";
  const auto start = std::chrono::steady_clock::now();
  // The exit code is /proc/<pid>/exe's, read back from the files below.
  if (std::system(command.c_str()) != 0) ADD_FAILURE() << "could not run " << command;
  if (seconds) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<WorkerResult> results;
  for (const int rank : ranks) {
    const std::string prefix = dir.file(scenario + "_" + std::to_string(rank));
    results.push_back({std::atoi(read_file(prefix + ".code").c_str()), read_file(prefix + ".log")});
  }
  return results;
}

TEST(Collective, GlooAllReduceAllGatherBroadcastAndBarrierAcrossTwoProcesses) {
  ScratchDir dir;
  for (const auto& worker : run_job("ops", {0, 1}, kWorld, dir)) EXPECT_EQ(worker.exit_code, 0) << worker.output;
}

// The mean over both ranks of two accumulated micro-batches each is the
// gradient of one process on all four micro-batches (loss averaged over them).
TEST(GradientReducer, BucketedMeanEqualsOneProcessOnTheWholeBatch) {
  ScratchDir dir;
  for (const auto& worker : run_job("reducer", {0, 1}, kWorld, dir)) ASSERT_EQ(worker.exit_code, 0) << worker.output;

  TinyNet net;
  for (int rank = 0; rank < kWorld; ++rank)
    for (int m = 0; m < 2; ++m) {
      const auto [x, y] = micro_batch(rank, m);
      (at::cross_entropy_loss(net.forward(x), y) / 4.0).backward();
    }
  for (int rank = 0; rank < kWorld; ++rank) {
    std::vector<at::Tensor> grads;
    torch::load(grads, grads_file(dir.path().string(), rank));
    const auto parameters = net.parameters();
    ASSERT_EQ(grads.size(), parameters.size());
    for (std::size_t i = 0; i < grads.size(); ++i) {
      // The unused parameter has no gradient in one process; data parallelism gives it zeros.
      const auto expected = parameters[i].grad().defined() ? parameters[i].grad() : at::zeros_like(parameters[i]);
      EXPECT_TRUE(at::allclose(grads[i], expected, 1e-6, 1e-7))
          << "rank " << rank << " parameter " << i << ":\n" << grads[i] << "\nexpected\n" << expected;
    }
  }
}

TEST(Collective, ADeadPeerFailsTheSurvivorWithAnErrorNamingItsRank) {
  ScratchDir dir;
  double seconds = 0;
  const auto workers = run_job("dead_peer", {0, 1}, kWorld, dir, &seconds);
  EXPECT_EQ(workers[1].exit_code, 9);
  EXPECT_EQ(workers[0].exit_code, 3) << workers[0].output;
  EXPECT_NE(workers[0].output.find("rank 0 of 2 (gloo): all-reduce failed"), std::string::npos) << workers[0].output;
  EXPECT_LT(seconds, 20.0);
}

TEST(Collective, ARendezvousWithAMissingWorkerNamesTheAddressAndTheFix) {
  ScratchDir dir;
  const auto server = run_job("alone", {0}, kWorld, dir);
  EXPECT_EQ(server[0].exit_code, 3);
  EXPECT_NE(server[0].output.find("rendezvous at 127.0.0.1:"), std::string::npos) << server[0].output;
  EXPECT_NE(server[0].output.find("not all 2 workers joined within 3 s"), std::string::npos) << server[0].output;

  const auto client = run_job("alone", {1}, kWorld, dir);
  EXPECT_EQ(client[0].exit_code, 3);
  EXPECT_NE(client[0].output.find("rank 1 of 2 could not reach rank 0 at 127.0.0.1:"), std::string::npos)
      << client[0].output;
}

}  // namespace
}  // namespace orchestrate::testing

int main(int argc, char** argv) {
  if (argc == 7 && std::string(argv[1]) == "--worker")
    return orchestrate::testing::run_worker(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]),
                                            argv[6]);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
