// The CLI end to end: exit codes, one-line errors with locations, a short
// real training run on synthetic data, and a clean stop on SIGINT.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sched.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "build_paths.h"
#include "command_runner.h"
#include "orchestrate/api.h"
#include "orchestrate/testing/scratch_dir.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

const std::string kMockRecipe = R"(schema_version = 1
[run]
name = "mock_lenet"
batch_size = 32
max_steps = 40
log_every = 10
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 2048
test_size = 256
[model]
plugin = "lenet"
[optimizer]
plugin = "adam"
lr = 0.003
eps = 1e-8
)";

size_t line_count(const std::string& text) {
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

TEST(Cli, VersionAndHelp) {
  auto version = run_orchestrate("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.output.find("LibTorch 2.11.0, plugin API " + std::to_string(kPluginApiVersion)), std::string::npos)
      << version.output;
  for (const char* command : {"run", "eval", "plugins", "describe", "runs", "report", "show", "compare"}) {
    auto help = run_orchestrate(std::string(command) + " --help");
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_NE(help.output.find("usage: orchestrate " + std::string(command)), std::string::npos) << help.output;
  }
  auto unknown = run_orchestrate("repot");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.output, "orchestrate: error: unknown command 'repot' (did you mean 'report'?); see orchestrate --help\n");
  EXPECT_EQ(run_orchestrate("frobnicate").output, "orchestrate: error: unknown command 'frobnicate'; see orchestrate --help\n");
}

TEST(Cli, HelpAndVersionWhereverTheyAreAsked) {
  // help CMD is CMD --help, for an engine command and a front-end one.
  for (const char* command : {"eval", "runs"}) {
    const auto help = run_orchestrate(std::string("help ") + command);
    EXPECT_EQ(help.exit_code, 0) << help.output;
    EXPECT_EQ(help.output, run_orchestrate(std::string(command) + " --help").output);
  }
  EXPECT_EQ(run_orchestrate("help trian").exit_code, 2);
  const auto version = run_orchestrate("--version").output;
  for (const char* asked : {"-V", "runs -V", "run recipe.toml --version", "report throughput --db x.db -V"}) {
    const auto answer = run_orchestrate(asked);
    EXPECT_EQ(answer.exit_code, 0) << asked;
    EXPECT_EQ(answer.output, version) << asked;
  }
  // Positionals are named as the usage line names them, not listed as
  // options; an internal option is not listed at all.
  const auto run_help = run_orchestrate("run --help").output;
  EXPECT_NE(run_help.find("\narguments:\n  RECIPE "), std::string::npos) << run_help;
  EXPECT_EQ(run_help.find("--recipe"), std::string::npos) << run_help;
  EXPECT_EQ(run_help.find("rerun-of"), std::string::npos) << run_help;
  EXPECT_NE(run_orchestrate("plugins --help").output.find("table, csv, json or markdown"), std::string::npos);
}

TEST(Cli, RerunWithoutARunIsAUsageError) {
  const auto rerun = run_orchestrate("rerun");
  EXPECT_EQ(rerun.exit_code, 2);
  EXPECT_EQ(rerun.output,
            "orchestrate: error: rerun: which run? give its id or name (orchestrate runs lists them), e.g. "
            "orchestrate rerun 3\n");
}

// --sync-debug takes torch.cuda.set_sync_debug_mode's two modes; a CPU run
// trains and says that it was not checked.
TEST(Cli, SyncDebugTakesWarnOrErrorAndSaysACpuRunIsNotChecked) {
  const auto bad = run_orchestrate("run fashion_mnist --sync-debug loud");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.output, "orchestrate: error: --sync-debug loud: unknown; use warn or error\n");
  ScratchDir dir;
  const auto cpu = run_orchestrate("run fashion_mnist --sync-debug error --quiet --db " + dir.file("runs.db") +
                                   " --set run.max_steps=6 --set eval.enabled=false --set checkpoint.at_end=false"
                                   " --set run.device='\"cpu\"'");
  EXPECT_EQ(cpu.exit_code, 0) << cpu.output;
  EXPECT_NE(cpu.output.find("--sync-debug checks CUDA runs only; this one trains on the cpu\n"), std::string::npos)
      << cpu.output;
}

// A missing or surplus argument is named as the usage line names it, never
// as the hidden option behind it ("the option '--recipe' is required").
TEST(Cli, MissingAndSurplusArgumentsAreNamedAsTheUsageNamesThem) {
  const struct {
    std::string arguments, message;
  } cases[] = {
      {"run",
       "orchestrate: error: run: missing RECIPE, recipe TOML file, or the name of a shipped recipe (orchestrate "
       "recipes) (usage: orchestrate run RECIPE [options])\n"},
      {"show", "orchestrate: error: show: missing RUN, run id or name (a name: its newest run) (usage: orchestrate "
               "show RUN [options])\n"},
      {"report", "orchestrate: error: report: missing REPORT, which report: throughput or regressions (see "
                 "orchestrate report --help)\n"},
      {"run recipes/fashion_mnist.toml --set optimizer.lr 0.01",
       "orchestrate: error: run: --set takes table.key=value: write --set optimizer.lr=0.01 (usage: orchestrate run "
       "RECIPE [options])\n"},
      {"run one.toml two.toml", "orchestrate: error: run: too many arguments (usage: orchestrate run RECIPE [options])\n"},
      // A recipe key typed as an option of its own.
      {"run fashion_mnist --max-steps 20",
       "orchestrate: error: run: unrecognised option '--max-steps'; a recipe key is set with --set TABLE.KEY=VALUE, "
       "e.g. --set TABLE.max_steps=VALUE (orchestrate describe recipe lists the tables)\n"},
      {"runs --bogus", "orchestrate: error: runs: unrecognised option '--bogus' (see orchestrate runs --help)\n"},
      // The positional argument first, as the usage line orders them; then the named option, as it is typed.
      {"eval",
       "orchestrate: error: eval: missing RECIPE, recipe TOML file, or the name of a shipped recipe (orchestrate "
       "recipes) (usage: orchestrate eval RECIPE --checkpoint PATH [options])\n"},
      {"eval recipes/fashion_mnist.toml",
       "orchestrate: error: eval: missing --checkpoint, the weights: a checkpoint directory, a run id or name (its "
       "newest checkpoint), or a .safetensors file (usage: orchestrate eval RECIPE --checkpoint PATH [options])\n"},
  };
  for (const auto& c : cases) {
    const auto result = run_orchestrate(c.arguments);
    EXPECT_EQ(result.exit_code, 2) << c.arguments;
    EXPECT_EQ(result.output, c.message) << c.arguments;
  }
}

// Flag, then environment, then recipe: a recipe's [log] db does not override
// $ORCHESTRATE_DB, and --db overrides both.
TEST(Cli, TheRunStoreIsTheFlagsThenTheEnvironmentsThenTheRecipes) {
  ScratchDir dir;
  const auto recipe = dir.write("store.toml", kMockRecipe + "[log]\ndb = \"" + dir.file("recipe.db") + "\"\n");
  const std::string run = "cd " + dir.path().string() + " && env -u ORCHESTRATE_PLUGIN_PATH ";
  const std::string args = std::string(" run ") + recipe + " --quiet --set run.max_steps=1 --set eval.enabled=false";
  ASSERT_EQ(run_shell(run + "ORCHESTRATE_DB=" + dir.file("env.db") + " " + orchestrate::build_paths::kOrchestrateBin + args).exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(dir.file("env.db")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("recipe.db")));
  ASSERT_EQ(run_shell(run + "ORCHESTRATE_DB=" + dir.file("env.db") + " " + orchestrate::build_paths::kOrchestrateBin + args + " --db " +
                      dir.file("flag.db"))
                .exit_code,
            0);
  EXPECT_TRUE(std::filesystem::exists(dir.file("flag.db")));
  ASSERT_EQ(run_shell(run + "-u ORCHESTRATE_DB " + std::string(orchestrate::build_paths::kOrchestrateBin) + args).exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(dir.file("recipe.db")));
}

// A sweep script reads the run it started from stdout, not by scraping text.
TEST(Cli, RunPrintsItsOutcomeAsJson) {
  ScratchDir dir;
  const auto recipe = dir.write("json.toml", kMockRecipe);
  const auto result = run_shell(std::string("env -u ORCHESTRATE_PLUGIN_PATH -u ORCHESTRATE_DB ") + orchestrate::build_paths::kOrchestrateBin +
                                " run " + recipe + " --quiet --format json --set run.max_steps=3 --db " +
                                dir.file("runs.db") + " 2>/dev/null");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto outcome = nlohmann::json::parse(result.output);
  EXPECT_EQ(outcome["run_id"], 1);
  EXPECT_EQ(outcome["name"], "mock_lenet");
  EXPECT_EQ(outcome["status"], "finished");
  EXPECT_EQ(outcome["steps"], 3);
  EXPECT_EQ(outcome["db"], dir.file("runs.db"));
  EXPECT_TRUE(outcome["final_metrics"]["train/loss"].is_number()) << outcome.dump(1);
  EXPECT_TRUE(outcome["serving_export"].is_null());
  const auto bad = run_orchestrate("run " + recipe + " --format yaml --db " + dir.file("runs.db"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.output, "orchestrate: error: run: --format yaml: use text (the default) or json\n");
}

// Wherever a recipe is taken, a shipped recipe's name is too.
TEST(Cli, EvalAndBenchInputTakeAShippedRecipesName) {
  const auto bench = run_orchestrate("bench-input fashion_mnist_first5 --batches 2");
  EXPECT_EQ(bench.exit_code, 0) << bench.output;
  EXPECT_NE(bench.output.find("images_per_s="), std::string::npos) << bench.output;
  const auto eval = run_orchestrate("eval fashion_mnist --checkpoint /nonexistent/weights.safetensors");
  EXPECT_EQ(eval.exit_code, 2) << eval.output;
  EXPECT_EQ(eval.output.find("recipe file not found"), std::string::npos) << "the name was taken for a missing recipe file: "
                                                                   << eval.output;
}

TEST(Cli, UnknownRecipeKeyIsOneLineWithLocationAndNoRun) {
  ScratchDir dir;
  std::string text = kMockRecipe;
  text.replace(text.find("lr = 0.003"), 10, "lrate = 0.003");
  const auto recipe = dir.write("bad.toml", text);
  auto result = run_orchestrate("run " + recipe + " --db " + dir.file("runs.db"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.output, "orchestrate: error: " + recipe +
                               ":18:1: [optimizer] unknown key 'lrate' for optimizer 'adam'; did you mean 'lr'? "
                               "(known: weight_decay, decay_norm_and_bias, no_decay, lr, beta1, beta2, eps, amsgrad, wrappers, groups)\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("runs.db"))) << "a recipe error must not touch the run store";
}

TEST(Cli, UnknownPluginNamesClosestMatch) {
  ScratchDir dir;
  std::string text = kMockRecipe;
  text.replace(text.find("\"lenet\""), 7, "\"lenett\"");
  const auto recipe = dir.write("bad.toml", text);
  auto result = run_orchestrate("run " + recipe);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(line_count(result.output), 1u) << result.output;
  EXPECT_NE(result.output.find(recipe + ":15:10: [model] plugin: unknown model 'lenett'; did you mean 'lenet'?"),
            std::string::npos)
      << result.output;
}

TEST(Cli, MalformedTomlAndBadOverride) {
  ScratchDir dir;
  const auto recipe = dir.write("broken.toml", "schema_version = 1\n[run\nepochs = 1\n");
  auto broken = run_orchestrate("run " + recipe);
  EXPECT_EQ(broken.exit_code, 2);
  EXPECT_NE(broken.output.find(recipe + ":2:"), std::string::npos) << broken.output;
  EXPECT_NE(broken.output.find("TOML syntax error"), std::string::npos) << broken.output;

  const auto good = dir.write("good.toml", kMockRecipe);
  auto typed = run_orchestrate("run " + good + " --set run.batch_size=many --dry-run");
  EXPECT_EQ(typed.exit_code, 2);
  EXPECT_EQ(typed.output,
            "orchestrate: error: --set run.batch_size=many: [run] batch_size: expected an integer, got 'many'\n");
  auto zero_lr = run_orchestrate("run " + good + " --set optimizer.lr=0 --dry-run");
  EXPECT_EQ(zero_lr.exit_code, 2);
  EXPECT_EQ(zero_lr.output, "orchestrate: error: --set optimizer.lr=0: [optimizer] lr: must be > 0\n");
  auto missing = run_orchestrate("run " + dir.file("absent.toml"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("absent.toml: recipe file not found"), std::string::npos) << missing.output;
}

TEST(Cli, DryRunPrintsResolvedRecipeThatLoadsBack) {
  ScratchDir dir;
  const auto recipe = dir.write("r.toml", kMockRecipe);
  auto first = run_orchestrate("run " + recipe + " --dry-run --set optimizer.lr=0.2");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("[optimizer]\nplugin = \"adam\"\n"), std::string::npos) << first.output;
  EXPECT_NE(first.output.find("\nlr = 0.2\n"), std::string::npos) << first.output;
  EXPECT_NE(first.output.find("[schedule]\nplugin = \"fixed\""), std::string::npos) << first.output;
  const auto resolved = dir.write("resolved.toml", first.output);
  auto second = run_orchestrate("run " + resolved + " --dry-run");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(first.output, second.output);
}

TEST(Cli, PluginsAndDescribe) {
  auto plugins = run_orchestrate("plugins --format csv");
  ASSERT_EQ(plugins.exit_code, 0) << plugins.output;
  for (const char* row : {"dataset,fashion_mnist,fashion_mnist,", "model,convnet,convnet,", "optimizer,adam,adam,",
                          "lr_schedule,piecewise,piecewise,"})
    EXPECT_NE(plugins.output.find(row), std::string::npos) << row << "\n" << plugins.output;

  auto adam = run_orchestrate("describe optimizer adam --format json");
  ASSERT_EQ(adam.exit_code, 0) << adam.output;
  auto rows = nlohmann::json::parse(adam.output);
  bool found_lr = false;
  for (const auto& row : rows)
    if (row["key"] == "lr") found_lr = row["type"] == "float" && row["default"] == 0.01;
  EXPECT_TRUE(found_lr) << adam.output;

  // Each core key says whether --resume may change it: a log cadence may, the seed may not.
  auto run_keys = run_orchestrate("describe recipe run --format json");
  ASSERT_EQ(run_keys.exit_code, 0) << run_keys.output;
  std::map<std::string, bool> resume_safe;
  for (const auto& row : nlohmann::json::parse(run_keys.output)) resume_safe[row["key"]] = row["resume_safe"];
  EXPECT_TRUE(resume_safe.at("log_every")) << run_keys.output;
  EXPECT_FALSE(resume_safe.at("seed")) << run_keys.output;

  auto unknown = run_orchestrate("describe optimizer adamx");
  EXPECT_EQ(unknown.exit_code, 3);
  EXPECT_EQ(line_count(unknown.output), 1u) << unknown.output;
  EXPECT_NE(unknown.output.find("orchestrate: error: unknown optimizer 'adamx'; did you mean 'adam'? (known: "),
            std::string::npos)
      << unknown.output;

  // The right name of another kind: that kind, not a near name of this one.
  auto lars = run_orchestrate("describe optimizer lars");
  EXPECT_EQ(lars.exit_code, 3);
  EXPECT_EQ(lars.output, "orchestrate: error: unknown optimizer 'lars': 'lars' is an optimizer_wrapper, not an "
                         "optimizer (orchestrate describe optimizer_wrapper lars)\n");
  // Names that contain the typed one rank by edit distance.
  auto resnet = run_orchestrate("describe model resnet");
  EXPECT_NE(resnet.output.find("unknown model 'resnet'; did you mean 'resnet_v1'?"), std::string::npos) << resnet.output;

  // A name like none known: most often the user's own plugin, not on the path.
  auto own = run_orchestrate("describe hook loss_logger");
  EXPECT_EQ(own.exit_code, 3);
  EXPECT_TRUE(own.output.ends_with(
      "(known: log_every_n_steps, print_model_statistics, profile, stop_at_step); a plugin of your own: give the "
      "folder of its liborchestrate_*.so with --plugin-path\n"))
      << own.output;

  // A kind as the recipe's table spells it; a kind or a table mistyped; a kind alone lists its components.
  auto schedule = run_orchestrate("describe schedule piecewise");
  EXPECT_EQ(schedule.exit_code, 0) << schedule.output;
  EXPECT_EQ(schedule.output.rfind("lr_schedule piecewise (plugin piecewise): ", 0), 0u) << schedule.output;
  auto plural = run_orchestrate("describe models convnet");
  EXPECT_EQ(plural.exit_code, 2) << plural.output;
  EXPECT_EQ(plural.output.rfind("orchestrate: error: describe: unknown kind 'models'; did you mean 'model'? (known: ", 0),
            0u)
      << plural.output;
  auto table = run_orchestrate("describe recipe runn");
  EXPECT_NE(table.output.find("describe recipe runn: unknown table; did you mean 'run'? (known: run, "),
            std::string::npos)
      << table.output;
  auto models = run_orchestrate("describe model");
  EXPECT_EQ(models.exit_code, 0) << models.output;
  EXPECT_NE(models.output.find("\nconvnet "), std::string::npos) << models.output;
  EXPECT_NE(models.output.find("\nresnet_v1 "), std::string::npos) << models.output;
  auto tables = run_orchestrate("describe recipe");
  EXPECT_EQ(tables.exit_code, 0) << tables.output;
  EXPECT_NE(tables.output.find("\n[schedule]  "), std::string::npos) << tables.output;
}

// `env` agrees with what the machine and the other commands say, on a GPU
// machine or not.
TEST(Cli, EnvSaysWhatThisMachineGivesARun) {
  ScratchDir dir;
  const std::string store = dir.file("runs.db");
  auto env = run_orchestrate("env --format json --db " + store);
  ASSERT_EQ(env.exit_code, 0) << env.output;
  std::map<std::string, std::string> here;
  for (const auto& row : nlohmann::json::parse(env.output)) here[row["what"]] = row["here"];

  const std::string version = run_orchestrate("--version").output;
  EXPECT_EQ(version.rfind("orchestrate " + here["orchestrate"].substr(0, here["orchestrate"].find(',')), 0), 0u)
      << version << here["orchestrate"];
  EXPECT_NE(version.find("LibTorch " + here["LibTorch"].substr(0, here["LibTorch"].find(','))), std::string::npos)
      << version << here["LibTorch"];

  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line) && line.rfind("model name", 0) != 0) {
  }
  EXPECT_EQ(here["CPU"], line.substr(line.find(':') + 2));
  cpu_set_t usable;
  ASSERT_EQ(sched_getaffinity(0, sizeof(usable), &usable), 0);
  EXPECT_EQ(here["cores"].rfind(std::to_string(CPU_COUNT(&usable)) + " usable by this process", 0), 0u)
      << here["cores"];

  if (here["GPUs"].rfind("none", 0) == 0) {
    EXPECT_EQ(here["GPU busy share"], "not measured: no GPU");
    EXPECT_EQ(here["fused batch norm + ReLU"].rfind("needs a GPU (cuDNN has the functions", 0), 0u)
        << here["fused batch norm + ReLU"] << ": the CUDA LibTorch every build uses has loaded its cuDNN";
  } else {
    EXPECT_NE(here.count("cuda:0"), 0u) << env.output;
  }

  std::size_t peak_rows = 0;
  for (const auto& [what, text] : here) peak_rows += what.rfind("matmul peak", 0) == 0;
  EXPECT_GE(peak_rows, 1u) << "the host's peaks, or a line saying none is measured yet:\n" << env.output;
  if (here.count("matmul peak"))
    EXPECT_EQ(here["matmul peak"].rfind("none measured on this host yet", 0), 0u) << here["matmul peak"];

  EXPECT_EQ(here["run store"], store + " (not created yet)");
  EXPECT_FALSE(std::filesystem::exists(store)) << "env reads, it writes nothing";
  std::set<std::string> plugin_names;
  for (const auto& row : nlohmann::json::parse(run_orchestrate("plugins --format json").output))
    plugin_names.insert(row["plugin"].get<std::string>());
  EXPECT_EQ(here["plugins"].rfind(std::to_string(plugin_names.size()) + " loaded from ", 0), 0u) << here["plugins"];
}

TEST(Cli, PluginWithAnotherApiVersionIsRefused) {
  // Listed with the good plugins (tests/bad_plugins has the whole output).
  auto result = run_orchestrate(std::string("plugins --plugin-path ") + orchestrate::build_paths::kBadPluginDir + "/future_api");
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_NE(result.output.find("plugin refused: "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("liborchestrate_future_api.so: plugin API version 999, but this orchestrate needs " +
                                    std::to_string(kPluginApiVersion) + "; "
                               "rebuild the plugin against orchestrate 0.1.0"),
            std::string::npos)
      << result.output;
}

TEST(Cli, DuplicateComponentAndCorruptLibraryAreRefused) {
  auto duplicate = run_orchestrate(std::string("plugins --plugin-path ") + orchestrate::build_paths::kBadPluginDir + "/duplicate");
  EXPECT_EQ(duplicate.exit_code, 3);
  EXPECT_NE(duplicate.output.find("dataset 'mock' is registered twice"), std::string::npos) << duplicate.output;

  ScratchDir dir;
  dir.write("liborchestrate_corrupt.so", "this is not an ELF file");
  auto corrupt = run_orchestrate("plugins --plugin-path " + dir.path().string());
  EXPECT_EQ(corrupt.exit_code, 3);
  EXPECT_NE(corrupt.output.find("liborchestrate_corrupt.so: cannot be loaded safely: not an ELF file"),
            std::string::npos)
      << corrupt.output;
}

TEST(Cli, TrainsAndRecordsRunWithStepTimings) {
  ScratchDir dir;
  const auto recipe = dir.write("mock.toml", kMockRecipe);
  const auto db = dir.file("runs.db");
  auto result = run_orchestrate("run " + recipe + " --db " + db + " --quiet");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("recorded in " + db), std::string::npos) << result.output;
  // The end-of-run summary reads on a terminal: no line wider than 100
  // columns (the path lines aside, as long as the scratch directory's path),
  // images/s, the phases, what limits the run, and the full report's command.
  std::istringstream lines(result.output);
  for (std::string line; std::getline(lines, line);)
    if (line.find(dir.path().string()) == std::string::npos) EXPECT_LE(line.size(), 100u) << line;
  for (const std::string& expected : std::vector<std::string>{"\nthroughput  ", " img/s (median step ", "\nstep time   data wait ",
                                     "\nlimit       ", "\nfull report orchestrate report throughput 1 --db " + db})
    EXPECT_NE(result.output.find(expected), std::string::npos) << expected << "\n" << result.output;

  RunStore store(db);
  auto run = store.find_run("mock_lenet");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "finished");
  const auto steps = store.step_timings(run->id);
  ASSERT_EQ(steps.size(), 40u);
  for (const auto& s : steps) {
    EXPECT_EQ(s.images, 32);
    EXPECT_GT(s.total_s, 0);
    EXPECT_GE(s.total_s + 1e-9, s.data_wait_s + s.compute_s + s.optimizer_s);
  }
  // The mock classes are separable: 40 steps of LeNet must beat chance (0.1) by far.
  EXPECT_GT(run->final_metrics.at("eval/top1"), 0.5);
  EXPECT_NE(store.resolved_recipe(run->id).find("name = \"mock_lenet\""), std::string::npos);
  // The six plugins used (mock, lenet, adam, fixed, none_compression for the
  // default [gradient_compression] and none_preprocessing for the default
  // [preprocessing]), each with its binary's SHA-256.
  auto plugins = run_shell("sqlite3 " + db + " \"select name || ' ' || length(sha256) from run_plugins order by name\"");
  EXPECT_EQ(plugins.output, "adam 64\nfixed 64\nlenet 64\nmock 64\nnone_compression 64\nnone_preprocessing 64\n");

  auto runs = run_orchestrate("runs --db " + db + " --format csv");
  EXPECT_EQ(runs.exit_code, 0);
  EXPECT_NE(runs.output.find(",mock_lenet,train,,finished,"), std::string::npos) << runs.output;
  auto report = run_orchestrate("report throughput mock_lenet --db " + db + " --format json");
  ASSERT_EQ(report.exit_code, 0) << report.output;
  auto rows = nlohmann::json::parse(report.output);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_GT(rows[0]["images_per_s"].get<double>(), 0);
}

TEST(Cli, SameSeedReproducesTheLossTrajectory) {
  ScratchDir dir;
  const auto recipe = dir.write("mock.toml", kMockRecipe);
  const auto db = dir.file("runs.db");
  auto losses_of = [&](const std::string& name, const std::string& seed) {
    auto result = run_orchestrate("run " + recipe + " --db " + db + " --quiet --set run.max_steps=12 --set eval.enabled=false" +
                                  " --set run.name=" + name + " --set run.seed=" + seed);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    RunStore store(db);
    std::vector<double> losses;
    for (const auto& step : store.step_timings(store.find_run(name)->id)) losses.push_back(step.loss);
    return losses;
  };
  const auto first = losses_of("a", "7");
  ASSERT_EQ(first.size(), 12u);
  EXPECT_EQ(first, losses_of("b", "7"));  // bit for bit: same data order, init and arithmetic
  EXPECT_NE(first, losses_of("c", "8"));
}

TEST(Cli, SigintFinishesStepAndRecordsInterruptedRun) {
  ScratchDir dir;
  std::string text = kMockRecipe;
  text.replace(text.find("max_steps = 40"), 14, "max_steps = 100000");
  const auto recipe = dir.write("long.toml", text);
  const auto db = dir.file("runs.db");
  auto result = run_shell("env -u ORCHESTRATE_PLUGIN_PATH " + std::string(orchestrate::build_paths::kOrchestrateBin) + " run " + recipe +
                          " --db " + db + " --quiet & pid=$!; sleep 8; kill -INT $pid; wait $pid; echo \"exit=$?\"");
  EXPECT_NE(result.output.find("exit=130"), std::string::npos) << result.output;
  RunStore store(db);
  auto run = store.find_run("mock_lenet");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "interrupted");
  EXPECT_GT(store.step_timings(run->id).size(), 0u);
}

TEST(Cli, MissingDataFailsTheRunAndRecordsWhy) {
  ScratchDir dir;
  const auto db = dir.file("runs.db");
  auto result = run_orchestrate(std::string("run ") + orchestrate::build_paths::kSourceDir + "/recipes/fashion_mnist.toml --set data.dir=" +
                                dir.path().string() + " --db " + db);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(line_count(result.output), 1u) << result.output;
  EXPECT_NE(result.output.find("train-images-idx3-ubyte.gz: file not found; install the Debian package "
                               "dataset-fashion-mnist or set [data] dir"),
            std::string::npos)
      << result.output;
  RunStore store(db);
  auto run = store.find_run("fashion_mnist_convnet");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "failed");
  EXPECT_NE(run->error.find("file not found"), std::string::npos) << run->error;
}

TEST(Cli, QueriesOnMissingStoreFailClearly) {
  ScratchDir dir;
  auto result = run_orchestrate("runs --db " + dir.file("nothing.db"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("nothing.db: no run store here"), std::string::npos) << result.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("nothing.db")));
}

}  // namespace
}  // namespace orchestrate::testing
