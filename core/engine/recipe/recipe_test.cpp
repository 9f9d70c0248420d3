#include "engine/recipe/recipe.h"

#include <gtest/gtest.h>

#include <set>

#include "engine/recipe/core_settings_tables.h"
#include "engine/recipe/core_tables.h"
#include "engine/recipe/recipe_settings.h"
#include "orchestrate/error.h"
#include "orchestrate/optimizer_wrapper.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate {
namespace {

// A registry with components whose factories are never called: recipe
// validation only reads their schemas and rules.
class RecipeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry.datasets().add("images", "test data", {string_param("dir", std::nullopt, "where"),
                                                    int_param("limit", 0, "how many").at_least(0)},
                            nullptr);
    registry.models().add("tiny", "test model", {int_param("width", 8, "units").at_least(1)}, nullptr);
    registry.optimizers().add("adam", "test optimizer",
                              {real_param("lr", 0.001, "step size").at_least(0).with_role(ParamRole::learning_rate),
                               real_param("beta1", 0.9, "b1"),
                               real_list_param("betas", std::vector<double>{0.9, 0.99}, "both")},
                              nullptr);
    registry.lr_schedules().add("fixed", "constant", {}, nullptr);
    registry.gradient_compressors().add("none", "dense all-reduce", {}, nullptr);
    registry.hooks().add("watch", "test hook", {int_param("every", 10, "updates").at_least(1)}, nullptr);
    registry.preprocessing().add("none", "identity", {}, nullptr);
    registry.preprocessing().add("crop", "test preprocessing", {int_param("size", 224, "side").at_least(1)}, nullptr);
    ParamSchema piecewise{real_list_param("boundaries", std::vector<double>{}, "where"),
                          real_list_param("factors", std::vector<double>{1.0}, "how much"),
                          string_param("unit", "epoch", "unit").one_of({"epoch", "step"})};
    piecewise.rule([](const Params& p) {
      return p.real_list("factors").size() == p.real_list("boundaries").size() + 1
                 ? std::string()
                 : "factors needs one more entry than boundaries";
    });
    registry.lr_schedules().add("piecewise", "steps", piecewise, nullptr);
    WrapperRules first;
    first.must_come_first = true;
    first.micro_batches = [](const Params& p) { return p.integer("num_batches"); };
    registry.optimizer_wrappers().add("batch_gradients", "accumulate", {int_param("num_batches", 1, "n").at_least(1)},
                                      nullptr, first);
    WrapperRules last;
    last.must_come_last = true;
    last.exclusive_group = "trust_ratio";
    registry.optimizer_wrappers().add("lars", "trust ratio", {real_param("eta", 0.001, "trust")}, nullptr, last);
    registry.optimizer_wrappers().add("lamb", "trust ratio", {}, nullptr, last);
    registry.optimizer_wrappers().add("clip", "clip", {real_param("max_norm", 5.0, "norm")}, nullptr);
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

const char* kKnownOptimizerKeys = "weight_decay, decay_norm_and_bias, no_decay, lr, beta1, betas, wrappers, groups";

TEST_F(RecipeTest, ResolvesDefaultsAndCoercesIntegerToFloat) {
  const Recipe r = load_recipe(write(kValid), {}, registry);
  const Settings& s = settings_of(r);
  EXPECT_EQ(s.run.epochs, 3);
  EXPECT_EQ(s.run.batch_size, 64);  // core default
  EXPECT_EQ(s.data_plugin, "images");
  EXPECT_EQ(s.data_params.string("dir"), "/data");
  EXPECT_EQ(s.data_params.integer("limit"), 0);
  EXPECT_DOUBLE_EQ(s.optimizer.base_lr, 1.0);
  EXPECT_EQ(s.schedule.plugin, "fixed");  // [schedule] is optional
  EXPECT_EQ(s.run.name, "r");
  EXPECT_EQ(s.precision.mode, PrecisionMode::fp32);
  EXPECT_TRUE(s.optimizer.wrappers.empty());
  EXPECT_EQ(s.preprocessing_plugin, "none");  // [preprocessing] is optional
}

// Each core key's default is written once, in its spec: a recipe that sets
// none of them gives settings whose every field is that default (the run
// name excepted, which an empty name makes the recipe file's).
TEST_F(RecipeTest, AnEmptyRecipeResolvesEveryCoreKeyToItsSchemaDefault) {
  const char* minimal = R"(schema_version = 1
[data]
plugin = "images"
dir = "/data"
[model]
plugin = "tiny"
[optimizer]
plugin = "adam"
)";
  const Settings s = settings_of(load_recipe(write(minimal), {}, registry));
  std::set<std::string> checked;
  for (const auto& [key, value] : core_setting_values(s)) {
    const auto dot = key.find('.');
    const TableSpec* table = find_table(key.substr(0, dot));
    ASSERT_NE(table, nullptr) << key;
    const ParamSpec* spec = table->schema.find(key.substr(dot + 1));
    ASSERT_NE(spec, nullptr) << key;
    ASSERT_TRUE(spec->default_value.has_value()) << key;
    if (key == "run.name") {
      EXPECT_EQ(std::get<std::string>(value), "r");
    } else {
      EXPECT_EQ(to_display(value), to_display(*spec->default_value)) << key;
    }
    checked.insert(key);
  }
  // Every key the core tables declare fills a field ([data] expects is only shown with errors).
  for (const auto& table : recipe_tables())
    for (const auto& spec : table.schema.specs())
      if (table.name != "data") EXPECT_EQ(checked.count(table.name + "." + spec.name), 1u) << table.name << "." << spec.name;
  EXPECT_GT(checked.size(), 60u);
}

TEST_F(RecipeTest, PreprocessingTableIsCheckedAgainstItsSchema) {
  std::string text = kValid;
  text += "[preprocessing]\nplugin = \"crop\"\nsize = 160\n";
  const Settings s = settings_of(load_recipe(write(text), parse_overrides({}), registry));
  EXPECT_EQ(s.preprocessing_plugin, "crop");
  EXPECT_EQ(s.preprocessing_params.integer("size"), 160);
  EXPECT_NE(error_of(text + "sise = 3\n").find("unknown key 'sise'"), std::string::npos) << error_of(text + "sise = 3\n");
  EXPECT_NE(error_of(text, {"preprocessing.size=0"}).find("size"), std::string::npos);
  EXPECT_NE(error_of(text, {"preprocessing.plugin=resnt"}).find("unknown preprocessing 'resnt'"), std::string::npos)
      << error_of(text, {"preprocessing.plugin=resnt"});
}

TEST_F(RecipeTest, OverridesAreTypedBySchema) {
  const Recipe r = load_recipe(write(kValid),
                               parse_overrides({"optimizer.lr=0.5", "run.name=exp 1", "optimizer.betas=[0.8, 0.9]",
                                                "schedule.plugin=piecewise", "schedule.boundaries=1,2.5",
                                                "schedule.factors=[1, 0.1, 0.01]", "data.dir=/other/place"}),
                               registry);
  const Settings& s = settings_of(r);
  EXPECT_DOUBLE_EQ(s.optimizer.base_lr, 0.5);
  EXPECT_EQ(s.run.name, "exp 1");
  EXPECT_EQ(s.optimizer.params.real_list("betas"), (std::vector<double>{0.8, 0.9}));
  EXPECT_EQ(s.schedule.plugin, "piecewise");
  EXPECT_EQ(s.schedule.params.real_list("boundaries"), (std::vector<double>{1, 2.5}));
  EXPECT_EQ(s.data_params.string("dir"), "/other/place");
}

TEST_F(RecipeTest, OverridesAddressArrayOfTablesEntries) {
  std::string text = kValid;
  text += "[[optimizer.wrappers]]\nplugin = \"clip\"\n";
  const Recipe r = load_recipe(write(text),
                               parse_overrides({"optimizer.wrappers.0.max_norm=1.5", "optimizer.wrappers.1.plugin=lars",
                                                "optimizer.wrappers.1.eta=0.002"}),
                               registry);
  const Settings& s = settings_of(r);
  ASSERT_EQ(s.optimizer.wrappers.size(), 2u);
  EXPECT_EQ(s.optimizer.wrappers[0].plugin, "clip");
  EXPECT_DOUBLE_EQ(s.optimizer.wrappers[0].params.real("max_norm"), 1.5);
  EXPECT_EQ(s.optimizer.wrappers[1].plugin, "lars");
  EXPECT_DOUBLE_EQ(s.optimizer.wrappers[1].params.real("eta"), 0.002);
  EXPECT_EQ(error_of(text, {"optimizer.wrappers.5.eta=1"}),
            "--set optimizer.wrappers.5.eta=1: 'optimizer.wrappers' is a list of 1 tables; address one by number, "
            "0..1 (the last appends a new entry)");
  EXPECT_EQ(error_of(text, {"run.epochs.x=1"}), "--set run.epochs.x=1: 'run.epochs' is not a table, so it has no key 'x'");
}

TEST_F(RecipeTest, UnknownKeyNamesLineAndClosestMatch) {
  std::string text = kValid;
  text += "lrr = 0.1\n";
  EXPECT_EQ(error_of(text), write(text) + ":12:1: [optimizer] unknown key 'lrr' for optimizer 'adam'; did you mean "
                                          "'lr'? (known: " + kKnownOptimizerKeys + ")");
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
  text.replace(text.find("\"adam\""), 6, "\"adamx\"");
  EXPECT_EQ(error_of(text), write(text) +
                                ":10:10: [optimizer] plugin: unknown optimizer 'adamx'; did you mean 'adam'? (known: adam)");
}

TEST_F(RecipeTest, AComponentOfAnotherKindIsNamedAsSuch) {
  std::string text = kValid;
  text.replace(text.find("\"adam\""), 6, "\"lars\"");
  EXPECT_EQ(error_of(text), write(text) + ":10:10: [optimizer] plugin: unknown optimizer 'lars': 'lars' is an "
                                          "optimizer_wrapper, not an optimizer (orchestrate describe optimizer_wrapper lars)");
}

TEST_F(RecipeTest, TheSuggestionIsTheNearestOfTheNamesThatContainTheTypedOne) {
  registry.models().add("inception_resnet_v2", "", {}, nullptr);
  registry.models().add("resnet_v1", "", {}, nullptr);
  std::string text = kValid;
  text.replace(text.find("\"tiny\""), 6, "\"resnet\"");
  EXPECT_NE(error_of(text).find("unknown model 'resnet'; did you mean 'resnet_v1'?"), std::string::npos)
      << error_of(text);
}

TEST_F(RecipeTest, UnknownKeysAreListedInTheOrderOfTheFile) {
  std::string text = kValid;
  for (int i = 0; i < 12; ++i) text += "k" + std::to_string(i) + " = 1\n";
  const std::string error = error_of(text);
  std::size_t previous = 0;
  for (int i = 0; i < 12; ++i) {
    const std::size_t at = error.find("unknown key 'k" + std::to_string(i) + "'");
    ASSERT_NE(at, std::string::npos) << error;
    EXPECT_GT(at, previous) << "k" << i << " out of file order:\n" << error;
    previous = at;
  }
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
  EXPECT_EQ(error_of(kValid, {"run.cudnn_benchmark_limit=-1"}),
            "--set run.cudnn_benchmark_limit=-1: [run] cudnn_benchmark_limit: must be >= 0");
  EXPECT_EQ(error_of(kValid, {"run.cudnn_benchmark_limit=10001"}),
            "--set run.cudnn_benchmark_limit=10001: [run] cudnn_benchmark_limit: must be <= 10000");
  EXPECT_EQ(error_of(kValid, {"optimizer.lr=abc"}), "--set optimizer.lr=abc: [optimizer] lr: expected a float, got 'abc'");
  EXPECT_EQ(error_of(kValid, {"schedule.plugin=piecewise", "schedule.boundaries=5"}),
            "--set schedule.boundaries=5: [schedule] boundaries: expected a list of floats, got integer; a list takes "
            "brackets: --set 'schedule.boundaries=[5]'");
  EXPECT_EQ(error_of(kValid, {"optimizer.lrr=1"}),
            std::string("--set optimizer.lrr=1: [optimizer] unknown key 'lrr' for optimizer 'adam'; did you mean 'lr'? "
                        "(known: ") + kKnownOptimizerKeys + ")");
}

TEST_F(RecipeTest, ZeroEpochsIsAnError) {
  EXPECT_EQ(error_of(kValid, {"run.epochs=0"}), "--set run.epochs=0: [run] epochs: must be >= 1");
}

// Checks across keys run at load, so --dry-run finds them, with the table's line.
TEST_F(RecipeTest, ComponentRulesRunAtLoad) {
  std::string text = kValid;
  text += "[schedule]\nplugin = \"piecewise\"\nboundaries = [5]\nfactors = [1.0, 0.2, 0.1]\n";
  EXPECT_EQ(error_of(text), write(text) + ":12:1: [schedule] piecewise: factors needs one more entry than boundaries");
  EXPECT_EQ(error_of(kValid, {"schedule.warmup=linear"}),
            "--set schedule.warmup=linear: [schedule] warmup = \"linear\" needs warmup_length > 0");
}

TEST_F(RecipeTest, WrapperChainOrderIsChecked) {
  std::string text = kValid;
  text += "[[optimizer.wrappers]]\nplugin = \"lars\"\n[[optimizer.wrappers]]\nplugin = \"batch_gradients\"\n"
          "[[optimizer.wrappers]]\nplugin = \"lamb\"\n";
  const std::string e = error_of(text);
  EXPECT_NE(e.find(":12:1: [[optimizer.wrappers]] entry 0: 'lars' must be the last wrapper"), std::string::npos) << e;
  EXPECT_NE(e.find(":14:1: [[optimizer.wrappers]] entry 1: 'batch_gradients' must be the first wrapper"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find(":16:1: [[optimizer.wrappers]] entry 2: 'lamb' cannot be combined with 'lars' (entry 0)"),
            std::string::npos)
      << e;
}

TEST_F(RecipeTest, UnknownWrapperNamesItsEntry) {
  std::string text = kValid;
  text += "[[optimizer.wrappers]]\nplugin = \"larss\"\n";
  EXPECT_EQ(error_of(text), write(text) + ":13:10: [[optimizer.wrappers]] entry 0 plugin: unknown optimizer_wrapper "
                                          "'larss'; did you mean 'lars'? (known: batch_gradients, clip, lamb, lars)");
}

TEST_F(RecipeTest, BadRegexInGroupIsARecipeError) {
  std::string text = kValid;
  text += "[[optimizer.groups]]\nmatch = \"fc(\"\nlr_scale = 10\n";
  EXPECT_NE(error_of(text).find(":12:1: [[optimizer.groups]] entry 0 match: \"fc(\" is not a valid regular expression"),
            std::string::npos)
      << error_of(text);
}

TEST_F(RecipeTest, MissingFileAndBadOverrideSyntax) {
  EXPECT_THROW(load_recipe(dir.file("absent.toml"), {}, registry), RecipeError);
  EXPECT_THROW(parse_overrides({"lr=0.1"}), UsageError);
  EXPECT_THROW(parse_overrides({"optimizer.lr"}), UsageError);
  EXPECT_THROW(parse_overrides({"optimizer..lr=1"}), UsageError);
}

TEST_F(RecipeTest, ResolvedRecipeLoadsBackToTheSameValues) {
  std::string text = kValid;
  text += "[[optimizer.wrappers]]\nplugin = \"clip\"\n[[optimizer.groups]]\nmatch = \"^fc\\\\.\"\nlr_scale = 10\n";
  const Recipe first = load_recipe(write(text), parse_overrides({"optimizer.betas=0.5,0.6", "optimizer.lr=0.00123456789",
                                                                "run.name=a \"quoted\"\\ name"}),
                                   registry);
  const std::string resolved = first.resolved_toml();
  const Recipe second = load_recipe(write(resolved), {}, registry);
  EXPECT_EQ(first.flattened(), second.flattened());
  EXPECT_NE(resolved.find("[optimizer]\nplugin = \"adam\"\ndecay_norm_and_bias = false\nno_decay = []\n"
                          "weight_decay = 0.0\nbeta1 = 0.9\nbetas = [0.5, 0.6]\nlr = 0.00123456789\n\n"
                          "[[optimizer.wrappers]]\nplugin = \"clip\"\nmax_norm = 5.0\n\n[[optimizer.groups]]\n"
                          "lr_scale = 10.0\nmatch = \"^fc\\\\.\"\nweight_decay_scale = 1.0\n"),
            std::string::npos)
      << resolved;
}

// The run store's params rows and the resolved recipe hold the same text, and
// floats keep every bit.
TEST_F(RecipeTest, FlattenedValuesRoundTripFloatsExactly) {
  const Recipe r = load_recipe(write(kValid), parse_overrides({"optimizer.lr=0.00123456789", "optimizer.beta1=0.1"}),
                               registry);
  const auto flattened = r.flattened();
  const std::map<std::string, std::string> rows(flattened.begin(), flattened.end());
  EXPECT_EQ(rows.at("optimizer.lr"), "0.00123456789");
  EXPECT_EQ(std::stod(rows.at("optimizer.beta1")), 0.1);
  EXPECT_EQ(rows.at("optimizer.plugin"), "adam");
  EXPECT_EQ(rows.at("precision.mode"), "fp32");
}

// [[hooks]], a top-level array of tables: entries in order in the resolved
// recipe and the flattened rows (hooks.<i>.<key>), --set appends or edits one.
TEST_F(RecipeTest, HooksAreATopLevelArrayOfTables) {
  std::string text = kValid;
  text += "[[hooks]]\nplugin = \"watch\"\n[[hooks]]\nplugin = \"watch\"\nevery = 3\n";
  const Recipe first = load_recipe(write(text), parse_overrides({"hooks.2.plugin=watch", "hooks.0.every=5"}), registry);
  const std::string resolved = first.resolved_toml();
  EXPECT_NE(resolved.find("[[hooks]]\nplugin = \"watch\"\nevery = 5\n\n[[hooks]]\nplugin = \"watch\"\nevery = 3\n\n"
                          "[[hooks]]\nplugin = \"watch\"\nevery = 10\n"),
            std::string::npos)
      << resolved;
  const Recipe second = load_recipe(write(resolved), {}, registry);
  EXPECT_EQ(first.flattened(), second.flattened());
  const auto flattened = first.flattened();
  const std::map<std::string, std::string> rows(flattened.begin(), flattened.end());
  EXPECT_EQ(rows.at("hooks.1.every"), "3");
  EXPECT_EQ(rows.at("hooks.2.plugin"), "watch");
  EXPECT_EQ(settings_of(first).hooks.size(), 3u);
  EXPECT_NE(error_of(std::string(kValid) + "[hooks]\nplugin = \"watch\"\n")
                .find("'hooks' must be an array of tables ([[hooks]]), got table"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(kValid) + "[[hooks]]\nplugin = \"wach\"\n").find("did you mean 'watch'"),
            std::string::npos);
}

// --set TABLE.plugin=other swaps the component: the file's keys for the old
// one that the new one does not take are dropped, with one note; a key
// given by --set is kept (and judged).
TEST_F(RecipeTest, SwappingAComponentWithSetDropsTheOldComponentsKeysWithANote) {
  const std::string text = std::string(kValid) + "[schedule]\nplugin = \"piecewise\"\nboundaries = [1.0]\n"
                                                 "factors = [1.0, 0.1]\nunit = \"step\"\n";
  const Recipe swapped = load_recipe(write(text), parse_overrides({"schedule.plugin=fixed"}), registry);
  EXPECT_EQ(swapped.notes, std::vector<std::string>{"--set schedule.plugin=fixed: dropped schedule's boundaries, "
                                                    "factors, unit (piecewise's keys, which fixed does not take)"});
  EXPECT_EQ(swapped.resolved_toml().find("boundaries"), std::string::npos) << swapped.resolved_toml();
  EXPECT_EQ(settings_of(swapped).schedule.plugin, "fixed");
  // Not a swap: the same plugin, or no --set of it, drops nothing.
  EXPECT_TRUE(load_recipe(write(text), parse_overrides({"schedule.plugin=piecewise"}), registry).notes.empty());
  // A key given on the command line stays, so a wrong one is still an error.
  EXPECT_NE(error_of(text, {"schedule.plugin=fixed", "schedule.factors=[1.0]"}).find("unknown key 'factors'"),
            std::string::npos);
}

// A component's rule over the rest of the recipe runs at load (so at
// --dry-run), located at the component's table.
TEST_F(RecipeTest, ARecipeRuleSeesTheOtherTablesAndIsReportedAtItsTable) {
  ParamSchema bounded{real_param("end_lr", 0.0, "where it ends").at_least(0)};
  bounded.recipe_rule([](const Params& own, const RecipeView& recipe) -> std::string {
    if (recipe.plugin("optimizer") != "adam" || !recipe.params("optimizer")) return "no optimizer seen";
    if (recipe.params("schedule") == nullptr) return "its own table not seen";
    return own.real("end_lr") > recipe.base_learning_rate() ? "end_lr above the optimizer's lr" : "";
  });
  registry.lr_schedules().add("bounded", "test schedule", bounded, nullptr);
  const std::string text = std::string(kValid) + "[schedule]\nplugin = \"bounded\"\nend_lr = 0.5\n";
  EXPECT_EQ(error_of(text), "");  // lr = 1
  EXPECT_EQ(error_of(text, {"optimizer.lr=0.1"}), dir.file("r.toml") + ":12:1: [schedule] bounded: end_lr above the "
                                                                      "optimizer's lr");
}

}  // namespace
}  // namespace orchestrate

namespace orchestrate {
namespace {

// [data] expects: the recipe's word on its data goes with each problem there, and nowhere else.
TEST_F(RecipeTest, DataExpectsIsShownWithEveryDataProblemOnly) {
  const std::string text = R"(schema_version = 1
[data]
plugin = "images"
expects = "ImageNet as TFRecords"
limit = -1
[model]
plugin = "tiny"
width = 0
[optimizer]
plugin = "adam"
)";
  const std::string error = error_of(text);
  EXPECT_NE(error.find(":5:9: [data] limit: must be >= 0 (this recipe expects ImageNet as TFRecords)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("[data] missing required key dir for dataset 'images' (this recipe expects ImageNet as "
                       "TFRecords)"),
            std::string::npos)
      << error;
  const auto model_line = error.substr(error.find("[model]"));
  EXPECT_EQ(model_line.find("this recipe expects"), std::string::npos) << error;
  EXPECT_EQ(error_of(R"(schema_version = 1
[data]
plugin = "images"
dir = "d"
expects = "ImageNet as TFRecords"
[model]
plugin = "tiny"
[optimizer]
plugin = "adam"
)"),
            "");
}

}  // namespace
}  // namespace orchestrate
