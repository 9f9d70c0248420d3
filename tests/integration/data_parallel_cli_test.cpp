// `orchestrate run --nproc N` as a command line: the flag and the recipe are
// checked once, then the command runs itself as N workers whose output comes
// back prefixed with their rank. (data_parallel_test checks the training.)
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>

#include "build_paths.h"
#include "command_runner.h"
#include "distributed/free_tcp_port.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

const std::string kTinyRecipe = R"(schema_version = 1
[run]
name = "tiny_data_parallel"
batch_size = 8
max_steps = 2
threads = 1
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 32
test_size = 16
[model]
plugin = "lenet"
[optimizer]
plugin = "sgd"
lr = 0.01
)";

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

TEST(DataParallelCli, TwoWorkersRunAsOneJobWithTheirOutputPrefixed) {
  ScratchDir dir;
  const auto recipe = dir.write("tiny.toml", kTinyRecipe);
  const auto result = run_orchestrate("run " + recipe + " --nproc 2 --quiet --db " + dir.file("runs.db"));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  // Rank 0 reports for the job; every line is a worker's, the launcher itself
  // says nothing on success.
  EXPECT_EQ(result.output.rfind("[rank 0] run 1 'tiny_data_parallel' finished after 2 steps", 0), 0u)
      << result.output;
  EXPECT_EQ(count_of(result.output, "\n"), count_of(result.output, "\n[rank ") + 1) << result.output;

  // Both workers took part, each knowing it was started by orchestrate.
  RunStore store(dir.file("runs.db"));
  const auto run = store.find_run("tiny_data_parallel");
  ASSERT_TRUE(run);
  EXPECT_EQ(store.step_timings(run->id, 0).size(), 2u);
  EXPECT_EQ(store.step_timings(run->id, 1).size(), 2u);
  bool described = false;
  for (const auto& event : store.events(run->id))
    described |= event.kind == "data_parallel" && event.message.rfind("rank 0 of 2 (orchestrate launch, ", 0) == 0;
  EXPECT_TRUE(described) << "no data_parallel event";
}

// The committed fixture's two train files of 8 records, two ranks: each rank
// reads one whole file (rank_shards.h), and the job says so.
TEST(DataParallelCli, TwoRanksOverTwoTfRecordFilesEachReadAWholeFile) {
  ScratchDir dir;
  std::string recipe = kTinyRecipe;
  const std::string mock = "plugin = \"mock\"\nchannels = 1\nheight = 28\nwidth = 28\ntrain_size = 32\ntest_size = 16\n";
  recipe.replace(recipe.find(mock), mock.size(),
                 "plugin = \"tfrecord\"\ndir = \"" + std::string(orchestrate::build_paths::kSourceDir) +
                     "/tests/data/fashion_mnist_tfrecord\"\n"
                     "num_classes = 10\nindex_cache_dir = \"off\"\nchannels = 1\nheight = 28\nwidth = 28\n");
  recipe += "[eval]\nenabled = false\n[checkpoint]\nevery_epochs = 0\nat_end = false\n";
  const auto path = dir.write("files.toml", recipe);
  const auto result = run_orchestrate("run " + path + " --nproc 2 --quiet --set run.batch_size=4 --db " + dir.file("runs.db"));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  RunStore store(dir.file("runs.db"));
  const auto run = store.find_run("tiny_data_parallel");
  ASSERT_TRUE(run);
  std::string sharding;
  for (const auto& event : store.events(run->id))
    if (event.kind == "data_sharding") sharding = event.message;
  EXPECT_EQ(sharding, "by file: 2 ranks, files/examples per rank 1/8, 1/8; each rank uses 8 per epoch");
}

TEST(DataParallelCli, NprocBelowOneIsAUsageError) {
  ScratchDir dir;
  const auto recipe = dir.write("tiny.toml", kTinyRecipe);
  const auto result = run_orchestrate("run " + recipe + " --nproc 0 --db " + dir.file("runs.db"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.output,
            "orchestrate: error: run: --nproc 0 is not a number of processes; give --nproc N with N >= 1 (default 1: "
            "train in this process)\n");
}

TEST(DataParallelCli, ARecipeErrorComesOnceBeforeAnyWorkerStarts) {
  ScratchDir dir;
  std::string text = kTinyRecipe;
  text.replace(text.find("lr = 0.01"), 9, "lrate = 0.01");
  const auto recipe = dir.write("bad.toml", text);
  const auto result = run_orchestrate("run " + recipe + " --nproc 2 --db " + dir.file("runs.db"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(count_of(result.output, "\n"), 1u) << result.output;
  EXPECT_EQ(result.output.find("[rank"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("unknown key 'lrate'"), std::string::npos) << result.output;
}

TEST(DataParallelCli, DryRunPrintsTheRecipeOnce) {
  ScratchDir dir;
  const auto recipe = dir.write("tiny.toml", kTinyRecipe);
  const auto result = run_orchestrate("run " + recipe + " --nproc=2 --dry-run");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(count_of(result.output, "name = \"tiny_data_parallel\""), 1u) << result.output;
  EXPECT_EQ(result.output.find("[rank"), std::string::npos) << result.output;
}

TEST(DataParallelCli, NprocUnderAnotherLauncherIsRefused) {
  ScratchDir dir;
  const auto recipe = dir.write("tiny.toml", kTinyRecipe);
  const auto result = run_shell("RANK=1 WORLD_SIZE=2 env -u ORCHESTRATE_PLUGIN_PATH " + std::string(orchestrate::build_paths::kOrchestrateBin) +
                                " run " + recipe + " --nproc 2 --db " + dir.file("runs.db"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.output,
            "orchestrate: error: run: --nproc 2 but this process is already rank 1 of 2 launched by torchrun; drop "
            "--nproc (torchrun starts the processes) or run without torchrun\n");
}

// The same binary under the usual launchers, without --nproc: two processes
// started with the variables torchrun, srun or mpirun would give them join one
// job, and the run records which launcher started it.
TEST(DataParallelCli, TheVariablesOfTorchrunSrunAndMpirunEachMakeOneJob) {
  struct Launcher {
    std::string name;
    std::string rank0, rank1;  // environment assignments for each worker
  };
  const std::vector<Launcher> launchers = {
      {"torchrun", "RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2",
       "RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2"},
      {"slurm", "SLURM_PROCID=0 SLURM_LOCALID=0 SLURM_NTASKS=2 SLURM_NODEID=0 SLURM_TASKS_PER_NODE=2 "
                "SLURM_JOB_NODELIST=localhost",
       "SLURM_PROCID=1 SLURM_LOCALID=1 SLURM_NTASKS=2 SLURM_NODEID=0 SLURM_TASKS_PER_NODE=2 "
       "SLURM_JOB_NODELIST=localhost"},
      {"mpirun", "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_SIZE=2",
       "OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_SIZE=2"},
  };
  for (const auto& launcher : launchers) {
    ScratchDir dir;
    const auto recipe = dir.write("tiny.toml", kTinyRecipe);
    const std::string port = "MASTER_PORT=" + std::to_string(pick_free_tcp_port("127.0.0.1"));
    const std::string clean = "env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u LOCAL_WORLD_SIZE -u MASTER_ADDR "
                              "-u ORCHESTRATE_LAUNCHER -u ORCHESTRATE_PLUGIN_PATH -u ORCHESTRATE_DB ";
    const std::string run = std::string(orchestrate::build_paths::kOrchestrateBin) + " run " + recipe + " --quiet --db " + dir.file("runs.db");
    const auto result = run_shell("(" + clean + launcher.rank1 + " " + port + " " + run + " > " + dir.file("rank1") +
                                  " 2>&1 &) ; " + clean + launcher.rank0 + " " + port + " " + run);
    ASSERT_EQ(result.exit_code, 0) << launcher.name << ": " << result.output;
    RunStore store(dir.file("runs.db"));
    const auto job = store.find_run("tiny_data_parallel");
    ASSERT_TRUE(job) << launcher.name;
    EXPECT_EQ(store.step_timings(job->id, 1).size(), 2u) << launcher.name;
    bool described = false;
    for (const auto& event : store.events(job->id))
      described |= event.kind == "data_parallel" &&
                   event.message.rfind("rank 0 of 2 (" + launcher.name + " launch, gloo)", 0) == 0;
    EXPECT_TRUE(described) << launcher.name << ": no data_parallel event";
  }
}

// Two network namespaces joined by a veth pair, each with its own address:
// two "hosts" on this machine. Removed with the object.
class TwoHosts {
 public:
  TwoHosts() : a_("orch" + std::to_string(::getpid()) + "a"), b_("orch" + std::to_string(::getpid()) + "b") {
    const std::string subnet = "10.231." + std::to_string(::getpid() % 250) + ".";
    address_a_ = subnet + "1";
    address_b_ = subnet + "2";
    const auto made = run_shell("set -e; ip netns add " + a_ + "; ip netns add " + b_ + "; ip link add " + a_ +
                                " type veth peer name " + b_ + "; ip link set " + a_ + " netns " + a_ +
                                "; ip link set " + b_ + " netns " + b_ + "; ip -n " + a_ + " addr add " + address_a_ +
                                "/24 dev " + a_ + "; ip -n " + b_ + " addr add " + address_b_ + "/24 dev " + b_ +
                                "; for n in " + a_ + " " + b_ + "; do ip -n $n link set $n up; ip -n $n link set lo up;"
                                " done");
    error_ = made.exit_code == 0 ? "" : made.output;
  }
  ~TwoHosts() { run_shell("ip netns del " + a_ + "; ip netns del " + b_); }
  TwoHosts(const TwoHosts&) = delete;
  TwoHosts& operator=(const TwoHosts&) = delete;

  const std::string& error() const { return error_; }
  // `command` run on host a or b, whose network interface has that host's name.
  std::string on_a(const std::string& command) const { return "ip netns exec " + a_ + " env GLOO_SOCKET_IFNAME=" + a_ + " " + command; }
  std::string on_b(const std::string& command) const { return "ip netns exec " + b_ + " env GLOO_SOCKET_IFNAME=" + b_ + " " + command; }
  const std::string& address_a() const { return address_a_; }
  const std::string& address_b() const { return address_b_; }

 private:
  std::string a_, b_, address_a_, address_b_, error_;
};

// A job over two hosts, launched the torchrun way (one process per host, the
// master on host a's own address): the ranks rendezvous and all-reduce over
// the network between the namespaces, not over the loopback interface.
TEST(DataParallelCli, TwoHostsInNetworkNamespacesTrainAsOneJob) {
  TwoHosts hosts;
  ASSERT_EQ(hosts.error(), "") << "creating network namespaces needs root and iproute2 (apt-get install iproute2)";
  ScratchDir dir;
  const auto recipe = dir.write("tiny.toml", kTinyRecipe);
  const std::string job = "env -u ORCHESTRATE_PLUGIN_PATH -u ORCHESTRATE_DB WORLD_SIZE=2 LOCAL_RANK=0 "
                          "LOCAL_WORLD_SIZE=1 MASTER_ADDR=" + hosts.address_a() + " MASTER_PORT=29531 ";
  const std::string run = std::string(orchestrate::build_paths::kOrchestrateBin) + " run " + recipe + " --quiet --db ";
  const auto result = run_shell("(" + hosts.on_b(job + "RANK=1 " + run + dir.file("host_b.db")) + " > " +
                                dir.file("host_b.log") + " 2>&1 &) ; " + hosts.on_a(job + "RANK=0 " + run + dir.file("host_a.db")));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  RunStore store(dir.file("host_a.db"));
  const auto trained = store.find_run("tiny_data_parallel");
  ASSERT_TRUE(trained);
  EXPECT_EQ(trained->status, "finished");
  EXPECT_EQ(store.step_timings(trained->id, 1).size(), 2u) << "host b's rank sent no rows";

  // Host b alone, pointed at a master that never comes: a one-line error
  // naming the address.
  const auto alone = run_shell(hosts.on_b(job + "RANK=1 " + run + dir.file("alone.db") +
                                          " --set distributed.timeout_s=2"));
  EXPECT_NE(alone.exit_code, 0);
  EXPECT_NE(alone.output.find("could not reach rank 0 at " + hosts.address_a() + ":29531"), std::string::npos)
      << alone.output;
}

}  // namespace
}  // namespace orchestrate::testing
