#include "plot/run_labels.h"

#include <gtest/gtest.h>

namespace orchestrate::plot {
namespace {

RunDetails run(std::int64_t id, const std::string& name, const std::string& recipe_tail) {
  RunDetails details;
  details.summary.id = id;
  details.summary.name = name;
  details.record.resolved_recipe = "[run]\nname = \"" + name + "\"\nseed = 42\n" + recipe_tail;
  return details;
}

TEST(RunLabelsTest, NameEachRunByTheRecipeKeysThatDifferLeavingOutItsName) {
  const auto labels = run_labels({run(3, "slow", "[optimizer]\nlr = 0.0005\nmomentum = 0.9\n"),
                                  run(4, "fast", "[optimizer]\nlr = 0.005\nmomentum = 0.9\n")});
  EXPECT_EQ(labels, (std::vector<std::string>{"optimizer.lr=0.0005", "optimizer.lr=0.005"}));
}

TEST(RunLabelsTest, SpellOutAtMostThreeKeysThenCountTheRest) {
  const auto labels =
      run_labels({run(1, "a", "[x]\na = 1\nb = 1\nc = 1\nd = 1\n"), run(2, "b", "[x]\na = 2\nb = 2\nc = 2\nd = 2\n")});
  EXPECT_EQ(labels[0], "x.a=1, x.b=1, x.c=1, +1 more");
}

TEST(RunLabelsTest, FallBackToNameAndIdWhenOnlyTheNameDiffers) {
  const auto labels = run_labels({run(1, "first", ""), run(2, "second", "")});
  EXPECT_EQ(labels, (std::vector<std::string>{"first #1", "second #2"}));
}

TEST(RunLabelsTest, AddNameAndIdWhereTheDifferingKeysDoNotTellRunsApart) {
  const auto labels =
      run_labels({run(1, "a", "[o]\nlr = 1\n"), run(2, "b", "[o]\nlr = 1\n"), run(3, "c", "[o]\nlr = 2\n")});
  EXPECT_EQ(labels, (std::vector<std::string>{"o.lr=1 (a #1)", "o.lr=1 (b #2)", "o.lr=2 (c #3)"}));
}

TEST(RunLabelsTest, SayNoneForAKeyARunLacks) {
  const auto labels = run_labels({run(1, "a", "[o]\nlr = 1\n"), run(2, "b", "[o]\nlr = 1\nnesterov = true\n")});
  EXPECT_EQ(labels, (std::vector<std::string>{"o.nesterov=(none)", "o.nesterov=true"}));
}

}  // namespace
}  // namespace orchestrate::plot
