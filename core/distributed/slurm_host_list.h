// Slurm's compressed lists, as launched tasks see them in their environment:
// host lists ("node[07-09,12],gpu3", SLURM_JOB_NODELIST) and task counts per
// node ("2(x3),1", SLURM_TASKS_PER_NODE). Written here because the only
// implementation is inside libslurm, which a training host should not need.
#pragma once

#include <string>
#include <vector>

namespace orchestrate {

// "node[07-09,12],gpu3" -> node07 node08 node09 node12 gpu3. A range keeps the
// zero padding of its lower bound ("[8-10]" -> 8 9 10, "[08-10]" -> 08 09 10);
// several bracket groups in one name expand to every combination, the last
// group varying fastest. Malformed text is a UsageError naming `variable`.
std::vector<std::string> expand_slurm_host_list(const std::string& text, const std::string& variable);

// "2(x3),1" -> 2 2 2 1, one count per node in node order. Malformed text is a
// UsageError naming `variable`.
std::vector<int> expand_slurm_tasks_per_node(const std::string& text, const std::string& variable);

}  // namespace orchestrate
