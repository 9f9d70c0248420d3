// What `report throughput` concludes from real runs: the verdict on three,
// the limit it names and the recipe change it proposes
// (core/analysis/bottleneck_verdict.h), and the model FLOPs utilisation of the
// ConvNet (core/engine/setup/utilisation_baseline.h).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <SQLiteCpp/SQLiteCpp.h>

#include <filesystem>
#include <string>

#include "build_paths.h"
#include "command_runner.h"
#include "orchestrate/testing/python_reference.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate::testing {
namespace {

// 24 photo-like JPEGs of 2400 x 1800: decoding one takes about half as long
// as a one-thread ResNet-18 step spends on it at 64 x 64, so a pipeline on
// the training thread starves the model (data wait about 40 %), while two
// pipeline threads keep up on the other core. One intra-op thread keeps the
// ratio when another test loads the machine (measured: 42 % and 0.2 %).
void write_large_photos(const ScratchDir& dir) {
  run_python(R"(
import gzip, os, numpy as np
from PIL import Image
raw = gzip.open("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz").read()
photos = np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 28, 28)
rng = np.random.default_rng(0)
for split, count in (("train", 24), ("val", 2)):
    for i in range(count):
        folder = os.path.join(")" + dir.file("photos") + R"(", split, "class%d" % (i % 2))
        os.makedirs(folder, exist_ok=True)
        base = np.asarray(Image.fromarray(photos[i]).resize((2400, 1800), Image.BICUBIC), np.float32)
        rgb = np.clip(base[..., None] + rng.normal(0, 12, (1800, 2400, 3)), 0, 255).astype(np.uint8)
        Image.fromarray(rgb).save(os.path.join(folder, "%d.jpg" % i), quality=92)
)");
}

const char* const kPhotoRecipe = R"(schema_version = 1
[run]
seed = 1
device = "cpu"
batch_size = 8
max_steps = 12
threads = 1
[data]
plugin = "image_folder"
channels = 3
[preprocessing]
plugin = "resnet"
size = 64
resize_size = 73
[model]
plugin = "resnet_v1"
depth = 18
[optimizer]
plugin = "sgd"
[eval]
enabled = false
[checkpoint]
at_end = false
)";

// Whether a run's utilisation event says it took the peak a run before it
// kept. A kept peak marked disturbed is measured again by a run that finds
// the machine idle (device_peak_cache.h): under a parallel ctest the first
// measurement can be marked, and the load gone by the second.
bool took_the_kept_peak(const std::string& events) {
  return events.find(", as measured 20") != std::string::npos ||
         events.find("in place of a disturbed measurement") != std::string::npos;
}

nlohmann::json report_row(const ScratchDir& dir, const std::string& run) {
  const auto report = run_orchestrate("report throughput " + run + " --format json --db " + dir.file("runs.db"));
  EXPECT_EQ(report.exit_code, 0) << report.output;
  return nlohmann::json::parse(report.output).at(0);
}

TEST(ThroughputVerdict, DecodingOnTheTrainingThreadIsInputBoundAndWorkersMakeItComputeBound) {
  ScratchDir dir;
  write_large_photos(dir);
  const std::string recipe = dir.write("photos.toml", kPhotoRecipe);
  const std::string common = " --set data.root=" + dir.file("photos") + " --db " + dir.file("runs.db") + " --quiet";
  ASSERT_EQ(run_orchestrate("run " + recipe + " --set run.name=starved --set run.num_workers=0" + common).exit_code, 0);
  ASSERT_EQ(run_orchestrate("run " + recipe + " --set run.name=fed --set run.num_workers=2" + common).exit_code, 0);

  const auto starved = report_row(dir, "starved");
  EXPECT_EQ(starved["limit"], "input") << starved.dump(1);
  const std::string fixes = starved["fixes"].at(0);  // the first fix, the one that matters
  EXPECT_EQ(fixes.rfind("[run] num_workers = ", 0), 0u) << fixes;  // up to the cores, whatever this host has
  EXPECT_NE(fixes.find("(now 0; the host has "), std::string::npos) << fixes;
  EXPECT_NE(std::string(starved["evidence"]).find("waited for data"), std::string::npos);

  const auto fed = report_row(dir, "fed");
  EXPECT_EQ(fed["limit"], "compute") << fed.dump(1);
  EXPECT_LT(fed["data_wait_share"].get<double>(), 0.1) << fed.dump(1);

  // For people: the verdict and each fix on lines of their own under the table.
  const auto text = run_orchestrate("report throughput starved --db " + dir.file("runs.db"));
  EXPECT_NE(text.output.find("(starved): input-bound: the model waited for data "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("\n  try: [run] num_workers = "), std::string::npos) << text.output;
}

TEST(ThroughputVerdict, TwoRanksWithATinyBucketAndALargeModelAreCommunicationBound) {
  ScratchDir dir;
  const std::string recipe = dir.write("comm.toml", R"(schema_version = 1
[run]
name = "chatty"
seed = 1
device = "cpu"
batch_size = 2
max_steps = 12
threads = 1
[data]
plugin = "mock"
height = 32
width = 32
train_size = 256
test_size = 16
[preprocessing]
plugin = "none"
[model]
plugin = "resnet_v1"
depth = 50
[optimizer]
plugin = "sgd"
[distributed]
bucket_size_mb = 0.01
[eval]
enabled = false
[checkpoint]
at_end = false
)");
  ASSERT_EQ(run_orchestrate("run " + recipe + " --nproc 2 --db " + dir.file("runs.db") + " --quiet").exit_code, 0);
  const auto row = report_row(dir, "chatty");
  EXPECT_EQ(row["limit"], "communication") << row.dump(1);
  std::string fixes;  // the array of fixes, in order, as CSV joins them
  for (const auto& fix : row["fixes"]) fixes += (fixes.empty() ? "" : "; ") + fix.get<std::string>();
  EXPECT_EQ(fixes.rfind("[distributed] bucket_size_mb = 25 (now 0.010", 0), 0u) << fixes;
  EXPECT_NE(fixes.find("[gradient_compression] plugin = \"dgc\""), std::string::npos) << fixes;
  // ResNet-50's 25.6 M float32 gradients, in MiB.
  EXPECT_NE(std::string(row["evidence"]).find("89.75 MiB sent per update"), std::string::npos) << row.dump(1);
}

// The tutorial ConvNet on 28x28 Fashion-MNIST, counted by hand (a
// multiply-add is 2 FLOPs): forward 0.389 + 4.461 + 0.664 MFLOP of the three
// convolutions, 0.074 + 0.001 of the dense layers, 5.589 in all; backward
// the weight gradients (as much again) and the input gradients of every
// layer but the first (5.199): 16.38 MFLOP per training image.
constexpr double kConvNetTrainFlops = 16.38e6;

TEST(ModelFlopsUtilisation, TheConvNetsCountIsTheAnalyticOneAndMfuIsImagesTimesFlopsOverTheStoredPeak) {
  ScratchDir dir;
  const std::string common = " --set run.max_steps=24 --set run.epochs=1 --set eval.enabled=false"
                             " --set checkpoint.at_end=false --set run.device='\"cpu\"' --db " +
                             dir.file("runs.db") + " --quiet";
  ASSERT_EQ(run_orchestrate("run fashion_mnist --set run.name=first" + common).exit_code, 0);
  ASSERT_EQ(run_orchestrate("run fashion_mnist --set run.name=second" + common).exit_code, 0);

  const auto row = report_row(dir, "first");
  const double flops = row["train_gflop_per_image"].get<double>() * 1e9;
  // 3x the forward includes the first layer's input gradient: 2.4 % above.
  EXPECT_NEAR(flops, kConvNetTrainFlops, 0.05 * kConvNetTrainFlops) << row.dump(1);
  const double peak = row["peak_gflop_per_s"].get<double>() * 1e9;
  EXPECT_GT(peak, 1e9) << row.dump(1);  // any CPU this builds on does more than 1 GFLOP/s of sgemm
  const double achieved = row["images_per_s"].get<double>() * flops;
  EXPECT_NEAR(row["achieved_gflop_per_s"].get<double>(), achieved / 1e9, 0.01 * achieved / 1e9 + 0.01);
  EXPECT_NEAR(row["mfu_percent"].get<double>(), 100 * achieved / peak, 0.01 * 100 * achieved / peak + 0.01);
  EXPECT_LT(row["mfu_percent"].get<double>(), 100) << row.dump(1);

  // The peak is measured once per host, precision and threads: the second
  // run takes the stored one.
  const auto events = run_orchestrate("show second --db " + dir.file("runs.db"));
  ASSERT_TRUE(took_the_kept_peak(events.output)) << events.output;
  if (events.output.find(", as measured 20") != std::string::npos)
    EXPECT_EQ(report_row(dir, "second")["peak_gflop_per_s"], row["peak_gflop_per_s"]);
}

// A run whose arithmetic outruns the peak it was measured against proves that
// peak low (a peak measured on a busy machine used to stay, and the run
// summary said "MFU 126.2 %"): the peak is measured again after the run and
// replaces the low one, in the run's report and in the host's cache, and an
// event says so.
TEST(ModelFlopsUtilisation, APeakARunOutrunsIsMeasuredAgainAndReplaced) {
  ScratchDir dir;
  const std::string cache = dir.file("cache");
  const auto run_with_cache = [&](const std::string& name) {
    const std::string settings = " --set run.max_steps=12 --set eval.enabled=false --set checkpoint.at_end=false"
                                 " --set run.device='\"cpu\"' --quiet --db " + dir.file("runs.db");
    const auto result = run_shell("env -u ORCHESTRATE_PLUGIN_PATH -u ORCHESTRATE_DB ORCHESTRATE_CACHE=" + cache + " " +
                                  orchestrate::build_paths::kOrchestrateBin + " run fashion_mnist --set run.name=" +
                                  name + settings + " 2>&1");
    ASSERT_EQ(result.exit_code, 0) << result.output;
  };
  run_with_cache("measures");
  {
    SQLite::Database peaks(cache + "/device_peaks.db", SQLite::OPEN_READWRITE);
    ASSERT_EQ(peaks.exec("UPDATE device_peaks SET flops_per_s = 1e6, method = 'a low figure, the faster of mm and "
                         "linear'"),
              1);
  }
  std::filesystem::remove(dir.file("runs.db"));  // a new store: the run takes the host cache's peak
  run_with_cache("outruns");

  const auto row = report_row(dir, "outruns");
  EXPECT_GT(row["peak_gflop_per_s"].get<double>(), 1.0) << "measured again, not 1 MFLOP/s: " << row.dump(1);
  EXPECT_LT(row["mfu_percent"].get<double>(), 100) << row.dump(1);
  const auto events = run_orchestrate("show outruns --db " + dir.file("runs.db")).output;
  EXPECT_NE(events.find("peak 1.0 MFLOP/s of"), std::string::npos) << events;
  EXPECT_NE(events.find("above the peak of 1.0 MFLOP/s it was measured against"), std::string::npos) << events;
  EXPECT_NE(events.find("kept in its place for this run and the next"), std::string::npos) << events;
  {
    SQLite::Database peaks(cache + "/device_peaks.db", SQLite::OPEN_READWRITE);
    EXPECT_GT(peaks.execAndGet("SELECT flops_per_s FROM device_peaks").getDouble(), 1e9);
    // A damaged cache's rate no device has: measured again, not an MFU of 0 % or none.
    ASSERT_EQ(peaks.exec("UPDATE device_peaks SET flops_per_s = -5"), 1);
  }
  std::filesystem::remove(dir.file("runs.db"));
  run_with_cache("damaged");
  const auto damaged = run_orchestrate("show damaged --db " + dir.file("runs.db")).output;
  EXPECT_NE(damaged.find("the kept peak, -5 FLOP/s, is not a rate a device has (a damaged cache?): measured again"),
            std::string::npos)
      << damaged;
  EXPECT_GT(report_row(dir, "damaged")["peak_gflop_per_s"].get<double>(), 1.0);
}

// A host measures its peak once: a run in a new store takes the one kept in
// the cache directory's store of peaks; a damaged cache is passed over with
// a note, never a failed run.
TEST(ModelFlopsUtilisation, ANewStoreTakesTheHostsPeakAndADamagedCacheIsPassedOver) {
  ScratchDir dir;
  // 12 steps: a run of 10 or fewer is not judged, and the verdict's advice is checked.
  const std::string recipe = dir.write("tiny.toml", R"(schema_version = 1
[run]
device = "cpu"
batch_size = 8
max_steps = 12
[data]
plugin = "mock"
height = 28
width = 28
train_size = 128
test_size = 16
[preprocessing]
plugin = "none"
[model]
plugin = "convnet"
[optimizer]
plugin = "sgd"
[eval]
enabled = false
[checkpoint]
at_end = false
)");
  const auto run_with_cache = [&](const std::string& cache, const std::string& db) {
    const auto result = run_shell("env -u ORCHESTRATE_PLUGIN_PATH -u ORCHESTRATE_DB ORCHESTRATE_CACHE=" + cache + " " +
                                  orchestrate::build_paths::kOrchestrateBin + " run " + recipe + " --quiet --db " + dir.file(db) + " 2>&1");
    EXPECT_EQ(result.exit_code, 0) << result.output;
    return run_orchestrate("show 1 --db " + dir.file(db)).output;
  };
  EXPECT_NE(run_with_cache(dir.file("cache"), "a.db").find(", measured now)"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir.file("cache/device_peaks.db")));
  const std::string second = run_with_cache(dir.file("cache"), "b.db");
  EXPECT_TRUE(took_the_kept_peak(second)) << second;

  // A peak kept before the faster of mm and linear was timed (mm alone read
  // a CPU's float16 peak at a thirteenth) is measured again, not taken, and
  // replaced: by any measurement above it, here, disturbed or not.
  {
    SQLite::Database peaks(dir.file("cache/device_peaks.db"), SQLite::OPEN_READWRITE);
    ASSERT_EQ(peaks.exec("UPDATE device_peaks SET flops_per_s = 1e8, method = '256x256 fp32 matmul, 2 threads, "
                         "best of 80'"),
              1);
  }
  const std::string older = run_with_cache(dir.file("cache"), "d.db");
  EXPECT_NE(older.find(", measured now); in place of a measurement by mm alone of "), std::string::npos) << older;
  {
    SQLite::Database peaks(dir.file("cache/device_peaks.db"), SQLite::OPEN_READONLY);
    EXPECT_NE(peaks.execAndGet("SELECT method FROM device_peaks").getString().find("the faster of mm and linear"),
              std::string::npos);
  }

  // A precision this host multiplies ten times faster is the report's first advice.
  {
    SQLite::Database peaks(dir.file("cache/device_peaks.db"), SQLite::OPEN_READWRITE);
    ASSERT_EQ(peaks.exec("INSERT INTO device_peaks (host, device, precision, threads, flops_per_s, method, "
                         "measured_at) SELECT host, device, 'bf16', threads, 10 * flops_per_s, method, measured_at "
                         "FROM device_peaks WHERE precision = 'fp32'"),
              1);
  }
  const auto report = run_shell("env ORCHESTRATE_CACHE=" + dir.file("cache") + " " +
                                orchestrate::build_paths::kOrchestrateBin + " report throughput 1 --db " +
                                dir.file("d.db") + " 2>&1");
  EXPECT_NE(report.output.find("try: [precision] mode = \"bf16\" (now fp32: this CPU's bf16 matrix products reach "),
            std::string::npos)
      << report.output;

  std::filesystem::create_directories(dir.file("damaged"));
  dir.write("damaged/device_peaks.db", "not a database at all, a few bytes of garbage");
  const std::string damaged = run_with_cache(dir.file("damaged"), "c.db");
  EXPECT_NE(damaged.find(", measured now); not kept in the host's peak cache ("), std::string::npos) << damaged;
}

}  // namespace
}  // namespace orchestrate::testing
