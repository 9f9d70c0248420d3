#include "distributed/launch_environment.h"

#include <gtest/gtest.h>

#include <map>

#include "orchestrate/error.h"

namespace orchestrate {
namespace {

using Variables = std::map<std::string, std::string>;

LaunchEnvironment read(const Variables& variables) {
  return read_launch_environment([&](const std::string& name) -> std::optional<std::string> {
    const auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  });
}

// The message of the error reading `variables` throws.
std::string error_of(const Variables& variables) {
  try {
    read(variables);
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
    EXPECT_EQ(e.exit_code(), ExitCode::usage);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

void expect_environment(const LaunchEnvironment& e, int rank, int world_size, int local_rank, int local_world_size,
                        const std::string& master_addr, int master_port, const std::string& launcher) {
  EXPECT_EQ(e.rank, rank);
  EXPECT_EQ(e.world_size, world_size);
  EXPECT_EQ(e.local_rank, local_rank);
  EXPECT_EQ(e.local_world_size, local_world_size);
  EXPECT_EQ(e.master_addr, master_addr);
  EXPECT_EQ(e.master_port, master_port);
  EXPECT_EQ(e.launcher, launcher);
}

TEST(LaunchEnvironment, NothingSetIsOneProcess) {
  const auto e = read({{"PATH", "/usr/bin"}, {"SLURM_JOB_ID", "7"}});
  expect_environment(e, 0, 1, 0, 1, "127.0.0.1", 29500, "none");
  EXPECT_FALSE(e.distributed());
}

TEST(LaunchEnvironment, Torchrun) {
  const auto e = read({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"},
                       {"MASTER_ADDR", "node01"}, {"MASTER_PORT", "29400"}});
  expect_environment(e, 5, 8, 1, 4, "node01", 29400, "torchrun");
  EXPECT_TRUE(e.distributed());
}

TEST(LaunchEnvironment, OrchestrateNprocMarksItself) {
  const auto e = read({{"RANK", "1"},
                       {"WORLD_SIZE", "2"},
                       {"LOCAL_RANK", "1"},
                       {"LOCAL_WORLD_SIZE", "2"},
                       {"MASTER_ADDR", "127.0.0.1"},
                       {"MASTER_PORT", "40001"},
                       {"ORCHESTRATE_LAUNCHER", "orchestrate"}});
  expect_environment(e, 1, 2, 1, 2, "127.0.0.1", 40001, "orchestrate");
}

TEST(LaunchEnvironment, TorchrunStyleByHandDefaultsToOneNode) {
  expect_environment(read({{"RANK", "2"}, {"WORLD_SIZE", "3"}}), 2, 3, 2, 3, "127.0.0.1", 29500, "torchrun");
  // A local size alone: ranks fill the nodes in order.
  expect_environment(read({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_WORLD_SIZE", "4"}, {"MASTER_ADDR", "n1"}}), 5,
                     8, 1, 4, "n1", 29500, "torchrun");
}

TEST(LaunchEnvironment, EmptyValueCountsAsUnset) {
  expect_environment(read({{"RANK", ""}, {"WORLD_SIZE", ""}}), 0, 1, 0, 1, "127.0.0.1", 29500, "none");
}

TEST(LaunchEnvironment, TorchrunComesBeforeSlurmAndMpi) {
  const auto e = read({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"},
                       {"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "4"}});
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_EQ(e.world_size, 2);
}

TEST(LaunchEnvironment, Slurm) {
  const auto e = read({{"SLURM_PROCID", "6"},
                       {"SLURM_NTASKS", "8"},
                       {"SLURM_LOCALID", "2"},
                       {"SLURM_NODEID", "1"},
                       {"SLURM_TASKS_PER_NODE", "4(x2)"},
                       {"SLURM_JOB_NODELIST", "node[07-09,12],gpu3"}});
  expect_environment(e, 6, 8, 2, 4, "node07", 29500, "slurm");
}

TEST(LaunchEnvironment, SlurmLocalSizeOfThisNodeFromAnUnevenList) {
  const Variables base{{"SLURM_PROCID", "6"}, {"SLURM_NTASKS", "7"}, {"SLURM_LOCALID", "0"},
                       {"SLURM_NODELIST", "a[1-4]"}};
  auto variables = base;
  variables["SLURM_TASKS_PER_NODE"] = "2(x3),1";
  variables["SLURM_NODEID"] = "3";
  EXPECT_EQ(read(variables).local_world_size, 1);
  EXPECT_EQ(read(variables).master_addr, "a1");  // SLURM_NODELIST when SLURM_JOB_NODELIST is absent
  // The step's own list wins over the job's and over what the job asked for.
  variables["SLURM_STEP_TASKS_PER_NODE"] = "3,2,1,1";
  variables["SLURM_NTASKS_PER_NODE"] = "2";
  EXPECT_EQ(read(variables).local_world_size, 1);
  variables["SLURM_NODEID"] = "0";
  variables["SLURM_PROCID"] = "1";
  variables["SLURM_LOCALID"] = "1";
  EXPECT_EQ(read(variables).local_world_size, 3);
  // Only the requested count known.
  auto requested = base;
  requested["SLURM_NTASKS"] = "8";
  requested["SLURM_NTASKS_PER_NODE"] = "4";
  EXPECT_EQ(read(requested).local_world_size, 4);
}

TEST(LaunchEnvironment, SlurmMasterFromTheStepsNodesAndOverrides) {
  Variables variables{{"SLURM_PROCID", "0"},          {"SLURM_NTASKS", "2"},
                      {"SLURM_LOCALID", "0"},         {"SLURM_TASKS_PER_NODE", "1(x2)"},
                      {"SLURM_JOB_NODELIST", "n[1-9]"}, {"SLURM_STEP_NODELIST", "n[4-5]"}};
  EXPECT_EQ(read(variables).master_addr, "n4");
  variables["MASTER_ADDR"] = "10.0.0.4";
  variables["MASTER_PORT"] = "12345";
  variables["SLURM_STEP_NODELIST"] = "n[";  // not even read when MASTER_ADDR is set
  const auto e = read(variables);
  EXPECT_EQ(e.master_addr, "10.0.0.4");
  EXPECT_EQ(e.master_port, 12345);
}

TEST(LaunchEnvironment, SlurmProcidWithoutNtasksIsABatchShellNotATaskLaunch) {
  EXPECT_EQ(read({{"SLURM_PROCID", "0"}, {"SLURM_JOB_NODELIST", "n1"}}).launcher, "none");
}

TEST(LaunchEnvironment, OpenMpi) {
  const auto e = read({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                       {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  expect_environment(e, 3, 4, 3, 4, "127.0.0.1", 29500, "mpirun");
  const auto spread = read({{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_SIZE", "8"},
                            {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                            {"MASTER_ADDR", "host0"}, {"MASTER_PORT", "29600"}});
  expect_environment(spread, 5, 8, 1, 4, "host0", 29600, "mpirun");
}

TEST(LaunchEnvironment, SlurmComesBeforeMpi) {
  EXPECT_EQ(read({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"OMPI_COMM_WORLD_RANK", "0"},
                  {"OMPI_COMM_WORLD_SIZE", "2"}})
                .launcher,
            "slurm");
}

TEST(LaunchEnvironmentErrors, NotAnInteger) {
  EXPECT_EQ(error_of({{"RANK", "one"}, {"WORLD_SIZE", "2"}}),
            "RANK='one' is not an integer; RANK must be this process's rank, from 0 to WORLD_SIZE-1 (unset RANK and "
            "WORLD_SIZE to train as one process)");
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2 "}}),
            "WORLD_SIZE='2 ' is not an integer; WORLD_SIZE must be the number of processes in the job, at least 1 "
            "(unset RANK and WORLD_SIZE to train as one process)");
  EXPECT_EQ(error_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "x"}}),
            "SLURM_LOCALID='x' is not an integer; SLURM_LOCALID must be this process's rank on its node, from 0 to "
            "SLURM_NTASKS_PER_NODE-1 (srun sets it for each task; run orchestrate through srun)");
  EXPECT_EQ(error_of({{"OMPI_COMM_WORLD_RANK", "99999999999"}, {"OMPI_COMM_WORLD_SIZE", "2"}}),
            "OMPI_COMM_WORLD_RANK='99999999999' is not an integer; OMPI_COMM_WORLD_RANK must be this process's rank, "
            "from 0 to OMPI_COMM_WORLD_SIZE-1 (mpirun sets it for each rank)");
}

TEST(LaunchEnvironmentErrors, Negative) {
  EXPECT_EQ(error_of({{"RANK", "-1"}, {"WORLD_SIZE", "2"}}),
            "RANK='-1' is negative; RANK must be this process's rank, from 0 to WORLD_SIZE-1 (unset RANK and "
            "WORLD_SIZE to train as one process)");
}

TEST(LaunchEnvironmentErrors, RankNotBelowWorldSize) {
  EXPECT_EQ(error_of({{"RANK", "4"}, {"WORLD_SIZE", "4"}}),
            "RANK='4' is not below WORLD_SIZE='4'; RANK must be this process's rank, from 0 to WORLD_SIZE-1 (unset "
            "RANK and WORLD_SIZE to train as one process)");
  EXPECT_EQ(error_of({{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "2"}}),
            "SLURM_PROCID='2' is not below SLURM_NTASKS='2'; SLURM_PROCID must be this process's rank, from 0 to "
            "SLURM_NTASKS-1 (srun sets it for each task; run orchestrate through srun)");
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "0"}}),
            "WORLD_SIZE='0' is less than 1; WORLD_SIZE must be the number of processes in the job, at least 1 (unset "
            "RANK and WORLD_SIZE to train as one process)");
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"},
                      {"MASTER_ADDR", "n1"}}),
            "LOCAL_RANK='2' is not below LOCAL_WORLD_SIZE=2; LOCAL_RANK must be this process's rank on its node, from "
            "0 to LOCAL_WORLD_SIZE-1 (unset RANK and WORLD_SIZE to train as one process)");
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "4"}}),
            "LOCAL_WORLD_SIZE='4' is not from 1 to WORLD_SIZE='2'; LOCAL_WORLD_SIZE must be the number of processes "
            "on this node, from 1 to WORLD_SIZE (unset RANK and WORLD_SIZE to train as one process)");
}

TEST(LaunchEnvironmentErrors, HalfALauncher) {
  EXPECT_EQ(error_of({{"WORLD_SIZE", "4"}}),
            "WORLD_SIZE='4' is set but RANK is not; RANK must be this process's rank, from 0 to WORLD_SIZE-1 (unset "
            "RANK and WORLD_SIZE to train as one process)");
  EXPECT_EQ(error_of({{"RANK", "1"}}),
            "RANK='1' is set but WORLD_SIZE is not; WORLD_SIZE must be the number of processes in the job, at least "
            "1 (unset RANK and WORLD_SIZE to train as one process)");
  EXPECT_EQ(error_of({{"OMPI_COMM_WORLD_SIZE", "2"}}),
            "OMPI_COMM_WORLD_SIZE='2' is set but OMPI_COMM_WORLD_RANK is not; OMPI_COMM_WORLD_RANK must be this "
            "process's rank, from 0 to OMPI_COMM_WORLD_SIZE-1 (mpirun sets it for each rank)");
}

TEST(LaunchEnvironmentErrors, PortOutOfRange) {
  for (const char* port : {"0", "65536", "70000"})
    EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", port}}),
              "MASTER_PORT='" + std::string(port) +
                  "' is not a TCP port; MASTER_PORT must be the TCP port of rank 0's rendezvous, from 1 to 65535 "
                  "(any free port on the host of rank 0)");
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "http"}}),
            "MASTER_PORT='http' is not an integer; MASTER_PORT must be the TCP port of rank 0's rendezvous, from 1 to "
            "65535 (any free port on the host of rank 0)");
}

TEST(LaunchEnvironmentErrors, MpiOverSeveralNodesNeedsMasterAddr) {
  EXPECT_EQ(error_of({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "8"},
                      {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}),
            "MASTER_ADDR is not set but the 8 ranks of OMPI_COMM_WORLD_SIZE='8' span several nodes "
            "(OMPI_COMM_WORLD_LOCAL_SIZE=4), so 127.0.0.1 cannot reach rank 0; pass -x MASTER_ADDR=<host of rank 0> "
            "to mpirun");
}

TEST(LaunchEnvironmentErrors, BadSlurmLists) {
  EXPECT_EQ(error_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_TASKS_PER_NODE", "1(x2"},
                      {"SLURM_JOB_NODELIST", "n[1-2]"}}),
            "SLURM_TASKS_PER_NODE='1(x2' has '1(x2' without its closing ')'; expected Slurm's form, e.g. 2(x3),1 "
            "(srun sets it for each task)");
  EXPECT_EQ(error_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_TASKS_PER_NODE", "1(x2)"},
                      {"SLURM_NODEID", "2"}, {"SLURM_JOB_NODELIST", "n[1-2]"}}),
            "SLURM_NODEID='2' is not below the 2 nodes of SLURM_TASKS_PER_NODE='1(x2)'; SLURM_NODEID must be this "
            "node's index in the job (srun sets it for each task; run orchestrate through srun)");
  EXPECT_EQ(error_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NODELIST", "n[1-2"}}),
            "SLURM_JOB_NODELIST='n[1-2' has a '[' without its ']'; expected Slurm's form, e.g. node[01-04,07],gpu3 "
            "(set MASTER_ADDR to the host of rank 0 to bypass it)");
}

}  // namespace
}  // namespace orchestrate
