#include "distributed/slurm_host_list.h"

#include <gtest/gtest.h>

#include "orchestrate/error.h"

namespace orchestrate {
namespace {

using Hosts = std::vector<std::string>;

Hosts expand(const std::string& text) { return expand_slurm_host_list(text, "SLURM_JOB_NODELIST"); }

std::string error_of(const std::string& text) {
  try {
    expand(text);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SlurmHostList, PlainNames) {
  EXPECT_EQ(expand("gpu3"), Hosts{"gpu3"});
  EXPECT_EQ(expand("a,b.example.org,c-1"), (Hosts{"a", "b.example.org", "c-1"}));
}

TEST(SlurmHostList, RangesKeepZeroPadding) {
  EXPECT_EQ(expand("node[07-09,12],gpu3"), (Hosts{"node07", "node08", "node09", "node12", "gpu3"}));
  EXPECT_EQ(expand("n[8-10]"), (Hosts{"n8", "n9", "n10"}));
  EXPECT_EQ(expand("n[098-101]"), (Hosts{"n098", "n099", "n100", "n101"}));
  EXPECT_EQ(expand("n[5]"), Hosts{"n5"});
}

TEST(SlurmHostList, SuffixesAndSeveralGroups) {
  EXPECT_EQ(expand("rack[1-2]-n[01-02].ib"),
            (Hosts{"rack1-n01.ib", "rack1-n02.ib", "rack2-n01.ib", "rack2-n02.ib"}));
  EXPECT_EQ(expand("a[1,3],b[2-3]"), (Hosts{"a1", "a3", "b2", "b3"}));
}

TEST(SlurmHostList, MalformedIsOneLineNamingTheVariable) {
  const std::string form = "; expected Slurm's form, e.g. node[01-04,07],gpu3 (set MASTER_ADDR to the host of rank "
                           "0 to bypass it)";
  EXPECT_EQ(error_of("n[1-2"), "SLURM_JOB_NODELIST='n[1-2' has a '[' without its ']'" + form);
  EXPECT_EQ(error_of("n1-2]"), "SLURM_JOB_NODELIST='n1-2]' has a ']' without its '['" + form);
  EXPECT_EQ(error_of("n[[1]]"), "SLURM_JOB_NODELIST='n[[1]]' has a '[' inside brackets" + form);
  EXPECT_EQ(error_of("a,,b"), "SLURM_JOB_NODELIST='a,,b' has an empty entry" + form);
  EXPECT_EQ(error_of("n[3-1]"), "SLURM_JOB_NODELIST='n[3-1]' has the descending range '3-1'" + form);
  EXPECT_EQ(error_of("n[a-b]"), "SLURM_JOB_NODELIST='n[a-b]' has 'a' where a number belongs" + form);
  EXPECT_EQ(error_of("n[]"), "SLURM_JOB_NODELIST='n[]' has '' where a number belongs" + form);
  EXPECT_EQ(error_of("n[1-99999999]"), "SLURM_JOB_NODELIST='n[1-99999999]' expands to more than 1000000 hosts" + form);
}

TEST(SlurmTasksPerNode, CountsAndRepeats) {
  EXPECT_EQ(expand_slurm_tasks_per_node("4", "SLURM_TASKS_PER_NODE"), std::vector<int>{4});
  EXPECT_EQ(expand_slurm_tasks_per_node("2(x3),1", "SLURM_TASKS_PER_NODE"), (std::vector<int>{2, 2, 2, 1}));
  EXPECT_THROW(expand_slurm_tasks_per_node("2(x)", "SLURM_TASKS_PER_NODE"), UsageError);
  EXPECT_THROW(expand_slurm_tasks_per_node("two", "SLURM_TASKS_PER_NODE"), UsageError);
}

}  // namespace
}  // namespace orchestrate
