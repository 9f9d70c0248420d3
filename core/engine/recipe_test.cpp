#include "recipe.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "orchestrate/error.h"
#include "scratch_dir.h"

namespace orchestrate {
namespace {

// A registry with components whose factories are never called: recipe
// validation only reads their schemas.
class RecipeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry.datasets().add("images", "test data", {string_param("dir", std::nullopt, "where"),
                                                    int_param("limit", 0, "how many").at_least(0)},
                            nullptr);
    registry.models().add("tiny", "test model", {int_param("width", 8, "units").at_least(1)}, nullptr);
    registry.optimizers().add("adam", "test optimizer",
                              {real_param("lr", 0.001, "step size").at_least(0), real_param("beta1", 0.9, "b1"),
                               real_list_param("betas", std::vector<double>{0.9, 0.99}, "both")},
                              nullptr);
    registry.lr_schedules().add("fixed", "constant", {}, nullptr);
    registry.lr_schedules().add("piecewise", "steps",
                                {real_list_param("boundaries", std::nullopt, "where"),
                                 string_param("unit", "epoch", "unit").one_of({"epoch", "step"})},
                                nullptr);
  }

  std::string write(const std::string& text) { return dir.write("r.toml", text); }

  // The RecipeError text of loading `text`, or "" if it loads.
  std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
    try {
      load_recipe(write(text), parse_overrides(sets), registry);
    } catch (const RecipeError& e) {
      return e.what();
    }
    return "";
  }

  Registry registry;
  testing::ScratchDir dir;
};

const char* kValid = R"(schema_version = 1
[run]
epochs = 3
[data]
plugin = "images"
dir = "/data"
[model]
plugin = "tiny"
[optimizer]
plugin = "adam"
lr = 1
)";

TEST_F(RecipeTest, ResolvesDefaultsAndCoercesIntegerToFloat) {
  Recipe r = load_recipe(write(kValid), {}, registry);
  EXPECT_EQ(r.run.integer("epochs"), 3);
  EXPECT_EQ(r.run.integer("batch_size"), 64);  // core default
  EXPECT_EQ(r.data.plugin, "images");
  EXPECT_EQ(r.data.params.string("dir"), "/data");
  EXPECT_EQ(r.data.params.integer("limit"), 0);
  EXPECT_DOUBLE_EQ(r.optimizer.params.real("lr"), 1.0);
  EXPECT_EQ(r.schedule.plugin, "fixed");  // [schedule] is optional
  EXPECT_EQ(r.run_name(), "r");
}

TEST_F(RecipeTest, OverridesAreTypedBySchema) {
  Recipe r = load_recipe(write(kValid),
                         parse_overrides({"optimizer.lr=0.5", "run.name=exp 1", "optimizer.betas=[0.8, 0.9]",
                                          "schedule.plugin=piecewise", "schedule.boundaries=1,2.5"}),
                         registry);
  EXPECT_DOUBLE_EQ(r.optimizer.params.real("lr"), 0.5);
  EXPECT_EQ(r.run.string("name"), "exp 1");
  EXPECT_EQ(r.optimizer.params.real_list("betas"), (std::vector<double>{0.8, 0.9}));
  EXPECT_EQ(r.schedule.plugin, "piecewise");
  EXPECT_EQ(r.schedule.params.real_list("boundaries"), (std::vector<double>{1, 2.5}));
}

TEST_F(RecipeTest, UnknownKeyNamesLineAndClosestMatch) {
  std::string text = kValid;
  text += "lrr = 0.1\n";
  EXPECT_EQ(error_of(text), write(text) + ":12:1: [optimizer] unknown key 'lrr' for optimizer 'adam'; did you mean "
                                          "'lr'? (known: lr, beta1, betas)");
}

TEST_F(RecipeTest, WrongTypeNamesLineAndTypes) {
  std::string text = kValid;
  text.replace(text.find("lr = 1"), 6, "lr = \"fast\"");
  EXPECT_EQ(error_of(text), write(text) + ":11:6: [optimizer] lr: expected a float, got string");
}

TEST_F(RecipeTest, AllMissingKeysAreReportedTogether) {
  registry.models().add("needs_two", "", {int_param("a", std::nullopt, ""), int_param("b", std::nullopt, "")}, nullptr);
  std::string text = kValid;
  text.replace(text.find("\"tiny\""), 6, "\"needs_two\"");
  EXPECT_EQ(error_of(text), write(text) + ":7:1: [model] missing required keys a, b for model 'needs_two'");
}

TEST_F(RecipeTest, UnknownPluginListsKnownAndClosest) {
  std::string text = kValid;
  text.replace(text.find("\"adam\""), 6, "\"adamw\"");
  EXPECT_EQ(error_of(text), write(text) +
                                ":10:10: [optimizer] plugin: unknown optimizer 'adamw'; did you mean 'adam'? (known: adam)");
}

TEST_F(RecipeTest, SyntaxErrorGivesLine) {
  std::string text = kValid;
  text += "oops = \n";
  const std::string e = error_of(text);
  EXPECT_NE(e.find(write(text) + ":12:"), std::string::npos) << e;
  EXPECT_NE(e.find("TOML syntax error"), std::string::npos) << e;
}

TEST_F(RecipeTest, UnknownTableAndBadVersion) {
  std::string text = kValid;
  text.replace(0, 18, "schema_version = 7");
  text += "[optimiser]\n";
  const std::string e = error_of(text);
  EXPECT_NE(e.find(":1:18: schema_version must be 1"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown table [optimiser]; did you mean 'optimizer'?"), std::string::npos) << e;
}

TEST_F(RecipeTest, RangeAndChoiceViolations) {
  EXPECT_EQ(error_of(kValid, {"run.batch_size=0"}), "--set run.batch_size=0: [run] batch_size: must be >= 1");
  EXPECT_EQ(error_of(kValid, {"run.device=tpu"}), "--set run.device=tpu: [run] device: must be one of: auto, cpu, cuda");
  EXPECT_EQ(error_of(kValid, {"optimizer.lr=abc"}), "--set optimizer.lr=abc: [optimizer] lr: expected a float, got 'abc'");
  EXPECT_EQ(error_of(kValid, {"optimizer.lrr=1"}),
            "--set optimizer.lrr=1: unknown key 'lrr' for optimizer 'adam'; did you mean 'lr'? (known: lr, beta1, betas)");
}

TEST_F(RecipeTest, MissingFileAndBadOverrideSyntax) {
  EXPECT_THROW(load_recipe(dir.file("absent.toml"), {}, registry), RecipeError);
  EXPECT_THROW(parse_overrides({"lr=0.1"}), UsageError);
  EXPECT_THROW(parse_overrides({"optimizer.lr"}), UsageError);
}

TEST_F(RecipeTest, ResolvedRecipeLoadsBackToTheSameValues) {
  Recipe first = load_recipe(write(kValid), parse_overrides({"optimizer.betas=0.5,0.6"}), registry);
  const std::string resolved = first.resolved_toml();
  Recipe second = load_recipe(write(resolved), {}, registry);
  EXPECT_EQ(first.flattened(), second.flattened());
  EXPECT_NE(resolved.find("[optimizer]\nbeta1 = 0.9\nbetas = [ 0.5, 0.6 ]\nlr = 1.0\nplugin = 'adam'"),
            std::string::npos)
      << resolved;
}

}  // namespace
}  // namespace orchestrate
