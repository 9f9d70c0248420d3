#include "distributed/launch_environment.h"

#include <charconv>
#include <cstdlib>

#include "distributed/slurm_host_list.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace {

// The variables through which one launcher tells a process who it is, and what
// to tell a user who finds one of them wrong.
struct LauncherVariables {
  const char* launcher;
  const char* rank;
  const char* world_size;
  const char* local_rank;
  const char* local_world_size;
  const char* hint;             // appended to every complaint, in parentheses
  const char* master_addr_fix;  // when the ranks span nodes and no master is known
};

constexpr LauncherVariables kTorchrun{
    "torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
    "unset RANK and WORLD_SIZE to train as one process",
    "set MASTER_ADDR=<host of rank 0> in every process's environment (torchrun does)"};
constexpr LauncherVariables kSlurm{
    "slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_STEP_TASKS_PER_NODE",
    "srun sets it for each task; run orchestrate through srun",
    "set MASTER_ADDR=<host of rank 0> (srun passes the environment on)"};
constexpr LauncherVariables kOpenMpi{
    "mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
    "OMPI_COMM_WORLD_LOCAL_SIZE", "mpirun sets it for each rank",
    "pass -x MASTER_ADDR=<host of rank 0> to mpirun"};

class EnvironmentReader {
 public:
  explicit EnvironmentReader(const EnvironmentLookup& lookup) : lookup_(lookup) {}

  std::optional<std::string> text(const std::string& name) const {
    auto value = lookup_(name);
    if (value && value->empty()) return std::nullopt;
    return value;
  }
  bool has(const std::string& name) const { return text(name).has_value(); }
  std::string quoted(const std::string& name) const { return name + "='" + text(name).value_or("") + "'"; }

  // The value of `name` as an integer, nullopt when unset; `meaning` completes
  // "NAME must be ..." in the complaint about a value that is not one.
  std::optional<int> integer(const std::string& name, const std::string& meaning, const std::string& hint) const {
    const auto value = text(name);
    if (!value) return std::nullopt;
    int number = 0;
    const auto [end, code] = std::from_chars(value->data(), value->data() + value->size(), number);
    if (code != std::errc() || end != value->data() + value->size())
      fail(quoted(name) + " is not an integer", name, meaning, hint);
    if (number < 0) fail(quoted(name) + " is negative", name, meaning, hint);
    return number;
  }

  [[noreturn]] static void fail(const std::string& problem, const std::string& name, const std::string& meaning,
                                const std::string& hint) {
    throw UsageError(problem + "; " + name + " must be " + meaning + " (" + hint + ")");
  }

 private:
  const EnvironmentLookup& lookup_;
};

std::string rank_meaning(const LauncherVariables& v) {
  return std::string("this process's rank, from 0 to ") + v.world_size + "-1";
}
std::string world_size_meaning() { return "the number of processes in the job, at least 1"; }
std::string local_rank_meaning(const LauncherVariables& v) {
  return std::string("this process's rank on its node, from 0 to ") + v.local_world_size + "-1";
}
std::string local_world_size_meaning(const LauncherVariables& v) {
  return std::string("the number of processes on this node, from 1 to ") + v.world_size;
}

// Rank and sizes of `v`: the global pair required; without a local size every
// rank is taken to be on this node, without a local rank the ranks are taken
// to fill the nodes in order. `local_world_size`, when given, replaces reading
// v.local_world_size (Slurm derives it from one of several variables).
void read_ranks(const EnvironmentReader& env, const LauncherVariables& v, LaunchEnvironment& launch,
                std::optional<int> local_world_size = std::nullopt) {
  const auto rank = env.integer(v.rank, rank_meaning(v), v.hint);
  const auto world_size = env.integer(v.world_size, world_size_meaning(), v.hint);
  if (!rank)
    EnvironmentReader::fail(env.quoted(v.world_size) + " is set but " + v.rank + " is not", v.rank,
                            rank_meaning(v), v.hint);
  if (!world_size)
    EnvironmentReader::fail(env.quoted(v.rank) + " is set but " + v.world_size + " is not", v.world_size,
                            world_size_meaning(), v.hint);
  if (*world_size < 1)
    EnvironmentReader::fail(env.quoted(v.world_size) + " is less than 1", v.world_size, world_size_meaning(),
                            v.hint);
  if (*rank >= *world_size)
    EnvironmentReader::fail(env.quoted(v.rank) + " is not below " + env.quoted(v.world_size), v.rank,
                            rank_meaning(v), v.hint);
  launch.rank = *rank;
  launch.world_size = *world_size;

  if (!local_world_size) local_world_size = env.integer(v.local_world_size, local_world_size_meaning(v), v.hint);
  const auto local_rank = env.integer(v.local_rank, local_rank_meaning(v), v.hint);
  launch.local_world_size = local_world_size.value_or(launch.world_size);
  if (launch.local_world_size < 1 || launch.local_world_size > launch.world_size)
    EnvironmentReader::fail(env.quoted(v.local_world_size) + " is not from 1 to " + env.quoted(v.world_size),
                            v.local_world_size, local_world_size_meaning(v), v.hint);
  launch.local_rank = local_rank.value_or(launch.rank % launch.local_world_size);
  if (launch.local_rank >= launch.local_world_size)
    EnvironmentReader::fail(env.quoted(v.local_rank) + " is not below " + v.local_world_size + "=" +
                                std::to_string(launch.local_world_size),
                            v.local_rank, local_rank_meaning(v), v.hint);
  launch.launcher = v.launcher;
}

// MASTER_ADDR, else `implied` (Slurm's first host), else 127.0.0.1 when every
// rank is on this node; MASTER_PORT, else the struct's default.
void read_master(const EnvironmentReader& env, const LauncherVariables& v, LaunchEnvironment& launch,
                 const std::optional<std::string>& implied = std::nullopt) {
  if (auto addr = env.text("MASTER_ADDR")) {
    launch.master_addr = *addr;
  } else if (implied) {
    launch.master_addr = *implied;
  } else if (launch.local_world_size < launch.world_size) {
    throw UsageError("MASTER_ADDR is not set but the " + std::to_string(launch.world_size) + " ranks of " +
                     env.quoted(v.world_size) + " span several nodes (" + v.local_world_size + "=" +
                     std::to_string(launch.local_world_size) + "), so 127.0.0.1 cannot reach rank 0; " +
                     v.master_addr_fix);
  }
  const std::string port_meaning = "the TCP port of rank 0's rendezvous, from 1 to 65535";
  const std::string port_hint = "any free port on the host of rank 0";
  const auto port = env.integer("MASTER_PORT", port_meaning, port_hint);
  if (port && (*port < 1 || *port > 65535))
    EnvironmentReader::fail(env.quoted("MASTER_PORT") + " is not a TCP port", "MASTER_PORT", port_meaning, port_hint);
  if (port) launch.master_port = *port;
}

LaunchEnvironment read_torchrun(const EnvironmentReader& env) {
  LaunchEnvironment launch;
  read_ranks(env, kTorchrun, launch);
  if (env.text("ORCHESTRATE_LAUNCHER") == "orchestrate") launch.launcher = "orchestrate";
  read_master(env, kTorchrun, launch);
  return launch;
}

// Slurm has no "tasks on this node" variable; the per-node lists (the step's
// first: SLURM_NTASKS_PER_NODE is what the job asked for, not what the step
// got) are indexed by this node's position. Sets `variable` to the one read.
std::optional<int> slurm_tasks_on_this_node(const EnvironmentReader& env, const char*& variable) {
  for (const char* name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
    const auto text = env.text(name);
    if (!text) continue;
    variable = name;
    const auto counts = expand_slurm_tasks_per_node(*text, name);
    const int node = env.integer("SLURM_NODEID", "this node's index in the job", kSlurm.hint).value_or(0);
    if (node >= static_cast<int>(counts.size()))
      EnvironmentReader::fail(env.quoted("SLURM_NODEID") + " is not below the " + std::to_string(counts.size()) +
                                  " nodes of " + env.quoted(name),
                              "SLURM_NODEID", "this node's index in the job", kSlurm.hint);
    return counts[node];
  }
  variable = "SLURM_NTASKS_PER_NODE";
  return env.integer(variable, "the number of tasks on each node", kSlurm.hint);
}

LaunchEnvironment read_slurm(const EnvironmentReader& env) {
  LaunchEnvironment launch;
  LauncherVariables slurm = kSlurm;
  const auto tasks_on_this_node = slurm_tasks_on_this_node(env, slurm.local_world_size);
  read_ranks(env, slurm, launch, tasks_on_this_node);
  // Rank 0 runs on the first node of the step, which is the job's first node
  // unless the step was given fewer nodes.
  std::optional<std::string> first_host;
  for (const char* name : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"})
    if (const auto hosts = env.text(name); hosts && !env.has("MASTER_ADDR")) {
      first_host = expand_slurm_host_list(*hosts, name).front();
      break;
    }
  read_master(env, slurm, launch, first_host);
  return launch;
}

LaunchEnvironment read_open_mpi(const EnvironmentReader& env) {
  LaunchEnvironment launch;
  read_ranks(env, kOpenMpi, launch);
  read_master(env, kOpenMpi, launch);
  return launch;
}

}  // namespace

LaunchEnvironment read_launch_environment(const EnvironmentLookup& lookup) {
  const EnvironmentReader env(lookup);
  if (env.has("RANK") || env.has("WORLD_SIZE")) return read_torchrun(env);
  if (env.has("SLURM_PROCID") && env.has("SLURM_NTASKS")) return read_slurm(env);
  if (env.has("OMPI_COMM_WORLD_RANK") || env.has("OMPI_COMM_WORLD_SIZE")) return read_open_mpi(env);
  return {};
}

LaunchEnvironment read_launch_environment() {
  return read_launch_environment([](const std::string& name) -> std::optional<std::string> {
    if (const char* value = std::getenv(name.c_str())) return std::string(value);
    return std::nullopt;
  });
}

}  // namespace orchestrate
