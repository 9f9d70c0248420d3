// Bad data end to end through the CLI, on copies of the committed
// Fashion-MNIST fixtures (tests/data) damaged the ways real data is: with
// on_corrupt = "skip" the run finishes and its events name every bad item
// and the split's count; with "fail" it ends failed with one line naming the
// item; past max_corrupt_fraction it fails saying so. Items found bad only
// when read mid-epoch (verify_images = false) follow the same policy.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "build_paths.h"
#include "command_runner.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = std::string(orchestrate::build_paths::kSourceDir) + "/tests/data/";

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string recipe(const std::string& data_table) {
  // One intra-op thread: a tiny model on a busy machine is slower with more.
  return "schema_version = 1\n[run]\nname = \"bad_data\"\ndevice = \"cpu\"\nbatch_size = 4\nmax_steps = 6\n"
         "num_workers = 2\nthreads = 1\n[data]\n" +
         data_table + "channels = 1\nheight = 28\nwidth = 28\n[model]\nplugin = \"lenet\"\n"
                      "[optimizer]\nplugin = \"adam\"\nlr = 0.001\n[eval]\nenabled = false\n"
                      "[checkpoint]\nevery_epochs = 0\nat_end = false\n";
}

struct Ran {
  CommandResult result;
  std::string status;
  std::vector<std::string> bad_data;  // the run's bad_data events
};

class BadData : public ::testing::Test {
 protected:
  Ran run(const std::string& data_table, const std::string& on_corrupt, double max_fraction = 0.5,
          const std::string& extra = "") {
    const auto path = dir_.write("recipe.toml", recipe(data_table));
    const auto db = dir_.file("runs.db");
    fs::remove(db);
    Ran ran;
    ran.result = run_orchestrate("run " + path + " --db " + db + " --quiet --set data.on_corrupt=" + on_corrupt +
                                 " --set data.max_corrupt_fraction=" + std::to_string(max_fraction) + extra);
    RunStore store(db);
    const auto found = store.find_run("bad_data");
    if (!found) return ran;
    ran.status = found->status;
    for (const auto& event : store.events(found->id))
      if (event.kind == "bad_data") ran.bad_data.push_back(event.message);
    return ran;
  }

  // The output's error lines (other lines say what was indexed).
  static std::vector<std::string> error_lines(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t end; start < text.size(); start = end + 1) {
      end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      const std::string line = text.substr(start, end - start);
      if (line.find("error") != std::string::npos) out.push_back(line);
    }
    return out;
  }

  ScratchDir dir_;
};

// Events that contain `text`.
int count_with(const std::vector<std::string>& events, const std::string& text) {
  int n = 0;
  for (const auto& e : events) n += e.find(text) != std::string::npos;
  return n;
}

class BadTfRecords : public BadData {
 protected:
  void SetUp() override {
    data_ = dir_.path() / "tfrecord";
    fs::copy(kFixtures + "fashion_mnist_tfrecord", data_);
    // Record 0 of the first shard: one bit of its data CRC flipped.
    const auto first = (data_ / "train-00000-of-00002").string();
    std::string bytes = file_bytes(first);
    std::uint64_t length = 0;
    std::memcpy(&length, bytes.data(), sizeof length);  // TFRecord lengths are little-endian, as this machine is
    bytes[12 + length] = static_cast<char>(bytes[12 + length] ^ 0x01);
    write_file(first, bytes);
    // The second shard's last record: cut off before its end.
    const auto second = (data_ / "train-00001-of-00002").string();
    const std::string whole = file_bytes(second);
    write_file(second, whole.substr(0, whole.size() - 10));
  }

  std::string table() const {
    return "plugin = \"tfrecord\"\ndir = \"" + data_.string() + "\"\nnum_classes = 10\nindex_cache_dir = \"off\"\n";
  }
  std::string shard(int i) const { return (data_ / ("train-0000" + std::to_string(i) + "-of-00002")).string(); }

  fs::path data_;
};

TEST_F(BadTfRecords, SkippedRecordsAreRunEventsNamingFileRecordAndCause) {
  const auto ran = run(table(), "skip");
  ASSERT_EQ(ran.result.exit_code, 0) << ran.result.output;
  EXPECT_EQ(ran.status, "finished");
  ASSERT_EQ(ran.bad_data.size(), 3u) << ran.result.output;  // each bad record, then the split's summary
  EXPECT_EQ(count_with(ran.bad_data, "train split: skipped " + shard(0) + ": record 0 at byte 0: bad data CRC"), 1);
  EXPECT_EQ(count_with(ran.bad_data, "train split: skipped " + shard(1) + ": record 7 at byte "), 1);
  EXPECT_EQ(count_with(ran.bad_data, ": truncated: the file ends "), 1);
  EXPECT_EQ(ran.bad_data.back().rfind("[data] tfrecord: skipped 2 bad records of 16 in the train split; the first: " +
                                          shard(0) + ": record 0",
                                      0),
            0u)
      << ran.bad_data.back();
}

TEST_F(BadTfRecords, FailEndsTheRunFailedWithOneLineNamingTheRecord) {
  const auto ran = run(table(), "fail");
  EXPECT_NE(ran.result.exit_code, 0);
  EXPECT_EQ(ran.status, "failed");
  const auto output = error_lines(ran.result.output);
  ASSERT_EQ(output.size(), 1u) << ran.result.output;
  EXPECT_NE(output[0].find(shard(0) + ": record 0 at byte 0: bad data CRC"), std::string::npos) << output[0];
  EXPECT_NE(output[0].find("2 bad records of 16 in the train split"), std::string::npos) << output[0];
}

TEST_F(BadTfRecords, MoreBadThanMaxCorruptFractionFailsSayingSo) {
  const auto ran = run(table(), "skip", 0.1);
  EXPECT_NE(ran.result.exit_code, 0);
  EXPECT_EQ(ran.status, "failed");
  EXPECT_NE(ran.result.output.find("2 bad records of 16 in the train split (12.5 % of them, more than "
                                   "max_corrupt_fraction = 0.1)"),
            std::string::npos)
      << ran.result.output;
}

class BadImageFolder : public BadData {
 protected:
  void SetUp() override {
    data_ = dir_.path() / "folder";
    fs::copy(kFixtures + "fashion_mnist_folder", data_, fs::copy_options::recursive);
    write_file(data_ / "train" / "0_T-shirt_top" / "empty.png", "");
    write_file(data_ / "train" / "1_Trouser" / "notes.png", "not an image, whatever its name says\n");
  }

  std::string table(bool verify) const {
    return "plugin = \"image_folder\"\nroot = \"" + data_.string() + "\"\nverify_images = " +
           (verify ? "true" : "false") + "\n";
  }
  std::string file(const std::string& name) const { return (data_ / "train" / name).string(); }

  fs::path data_;
};

TEST_F(BadImageFolder, SkippedFilesAreRunEventsNamingEach) {
  const auto ran = run(table(true), "skip");
  ASSERT_EQ(ran.result.exit_code, 0) << ran.result.output;
  EXPECT_EQ(ran.status, "finished");
  ASSERT_EQ(ran.bad_data.size(), 3u) << ran.result.output;
  EXPECT_EQ(count_with(ran.bad_data, "train split: skipped " + file("0_T-shirt_top/empty.png") + ": zero-byte file"), 1);
  EXPECT_EQ(count_with(ran.bad_data, "train split: skipped " + file("1_Trouser/notes.png") +
                                         ": neither a JPEG nor a PNG file"),
            1);
  EXPECT_NE(ran.bad_data.back().find("skipped 2 bad files of 26 in the train split"), std::string::npos)
      << ran.bad_data.back();
}

TEST_F(BadImageFolder, FailEndsTheRunFailedWithOneLine) {
  const auto ran = run(table(true), "fail");
  EXPECT_NE(ran.result.exit_code, 0);
  EXPECT_EQ(ran.status, "failed");
  const auto output = error_lines(ran.result.output);
  ASSERT_EQ(output.size(), 1u) << ran.result.output;
  EXPECT_NE(output[0].find(file("0_T-shirt_top/empty.png") + ": zero-byte file"), std::string::npos) << output[0];
}

// verify_images = false: the non-image is found only when a pipeline
// thread reads it. Its 25 files are all read in 5 steps of 5.
TEST_F(BadImageFolder, AFileFoundBadWhenReadIsSkippedAndReplacedOrFailsTheRun) {
  fs::remove(data_ / "train" / "0_T-shirt_top" / "empty.png");
  const std::string every_file = " --set run.batch_size=5 --set run.max_steps=5";
  const auto skipped = run(table(false), "skip", 0.5, every_file);
  ASSERT_EQ(skipped.result.exit_code, 0) << skipped.result.output;
  EXPECT_EQ(skipped.status, "finished");
  ASSERT_EQ(skipped.bad_data.size(), 1u) << skipped.result.output;
  EXPECT_NE(skipped.bad_data[0].find("train split: skipped " + file("1_Trouser/notes.png") +
                                     ": neither a JPEG nor a PNG file"),
            std::string::npos)
      << skipped.bad_data[0];
  EXPECT_NE(skipped.bad_data[0].find("(found when read in epoch 1; example "), std::string::npos) << skipped.bad_data[0];
  EXPECT_NE(skipped.bad_data[0].find(" replaced by the next one that reads)"), std::string::npos) << skipped.bad_data[0];

  const auto failed = run(table(false), "fail", 0.5, every_file);
  EXPECT_NE(failed.result.exit_code, 0);
  EXPECT_EQ(failed.status, "failed");
  EXPECT_NE(failed.result.output.find(file("1_Trouser/notes.png") + ": neither a JPEG nor a PNG file"),
            std::string::npos)
      << failed.result.output;
  EXPECT_NE(failed.result.output.find("(found when read, in the train split; fix or remove the file"),
            std::string::npos)
      << failed.result.output;

  // The updates before the failure were fp16 overflows, skipped on the
  // device and read at log points only: the failed run still names them.
  const auto overflowed = run(table(false), "fail", 0.5,
                              every_file + " --set precision.mode=fp16 --set precision.loss_scale=1e12"
                                           " --set run.log_every=100");
  EXPECT_EQ(overflowed.status, "failed");
  RunStore store(dir_.file("runs.db"));
  std::vector<std::string> skipped_updates;
  for (const auto& event : store.events(store.find_run("bad_data")->id))
    if (event.kind == "skipped_update") skipped_updates.push_back(event.message);
  ASSERT_FALSE(skipped_updates.empty()) << overflowed.result.output;
  EXPECT_EQ(skipped_updates[0], "update 1 (epoch 1) skipped: inf/nan gradients at loss scale 999999995904.000000");
}

}  // namespace
}  // namespace orchestrate::testing
