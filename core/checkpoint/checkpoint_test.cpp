// The checkpoint directory format: what is written, that a damaged or newer
// checkpoint is refused with a clear message, and that a crashed save never
// shows up as a checkpoint.
#include "checkpoint/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "orchestrate/error.h"
#include "orchestrate/testing/error_text.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::ScratchDir;

CheckpointContent sample(std::int64_t step, std::int64_t micro_batch = 0) {
  CheckpointContent c;
  c.meta.orchestrate_version = "0.1.0";
  c.meta.run_id = 7;
  c.meta.step = step;
  c.meta.micro_batch = micro_batch;
  c.meta.epoch = 2;
  c.meta.reason = "interval";
  c.meta.created_at = "2026-11-22T05:00:00.000Z";
  c.meta.model = "lenet";
  c.meta.metrics = {{"train/loss", 0.25}};
  c.meta.recipe_params = {{"optimizer.lr", "0.05"}};
  c.weights.tensors = {{"fc.weight", at::arange(6, at::kFloat).reshape({2, 3})}};
  c.trainer_state = std::string("archive bytes\0with a zero", 25);
  c.recipe_toml = "schema_version = 1\n";
  return c;
}

TEST(CheckpointFormat, WritesEveryPartAndReadsTheDescriptionBack) {
  ScratchDir dir;
  const auto written = write_checkpoint(dir.path().string(), sample(300));
  EXPECT_EQ(fs::path(written.path).filename(), "step-00000300");
  for (const char* file : {kWeightsFile, kTrainerStateFile, kRecipeFile, kMetaFile})
    EXPECT_TRUE(fs::exists(fs::path(written.path) / file)) << file;
  std::int64_t total = 0;
  for (const auto& entry : fs::directory_iterator(written.path)) total += static_cast<std::int64_t>(entry.file_size());
  EXPECT_EQ(written.bytes, total);

  const CheckpointMeta meta = read_checkpoint_meta(written.path);
  EXPECT_EQ(meta.step, 300);
  EXPECT_EQ(meta.run_id, 7);
  EXPECT_EQ(meta.model, "lenet");
  EXPECT_DOUBLE_EQ(meta.metrics.at("train/loss"), 0.25);
  EXPECT_EQ(meta.recipe_params.at("optimizer.lr"), "0.05");
  EXPECT_EQ(meta.file_bytes.at(kTrainerStateFile), 25);
  std::ifstream state(fs::path(written.path) / kTrainerStateFile, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(state), {}), sample(0).trainer_state);
}

TEST(CheckpointFormat, NamesPositionsAndListsThemInOrder) {
  ScratchDir dir;
  for (auto [step, micro] : std::vector<std::pair<int, int>>{{20, 0}, {3, 1}, {3, 0}, {100, 0}})
    write_checkpoint(dir.path().string(), sample(step, micro));
  std::vector<std::string> names;
  for (const auto& path : checkpoints_in(dir.path().string())) names.push_back(fs::path(path).filename());
  EXPECT_EQ(names, (std::vector<std::string>{"step-00000003", "step-00000003+1", "step-00000020", "step-00000100"}));
}

TEST(CheckpointFormat, ReplacesACheckpointOfTheSamePosition) {
  ScratchDir dir;
  write_checkpoint(dir.path().string(), sample(5));
  auto second = sample(5);
  second.meta.reason = "end";
  const auto written = write_checkpoint(dir.path().string(), second);
  EXPECT_EQ(read_checkpoint_meta(written.path).reason, "end");
  EXPECT_EQ(checkpoints_in(dir.path().string()).size(), 1u);
}

// The run store's row is written in BeforePublish: by then every file is
// staged, the size is known, and the name is not yet taken; a throw there
// publishes nothing and keeps the checkpoint that held the name.
TEST(CheckpointFormat, CallsBeforePublishWithTheFinalSizeAndPublishesNothingWhenItThrows) {
  ScratchDir dir;
  std::int64_t seen_bytes = -1;
  const auto written = write_checkpoint(dir.path().string(), sample(4), [&](const WrittenCheckpoint& staged) {
    EXPECT_FALSE(fs::exists(staged.path)) << "called before the directory takes its name";
    seen_bytes = staged.bytes;
  });
  std::int64_t on_disk = 0;
  for (const auto& entry : fs::directory_iterator(written.path))
    on_disk += static_cast<std::int64_t>(entry.file_size());
  EXPECT_EQ(seen_bytes, on_disk);
  EXPECT_EQ(written.bytes, on_disk);

  auto replacement = sample(4);
  replacement.meta.reason = "end";
  EXPECT_THROW(write_checkpoint(dir.path().string(), replacement,
                                [](const WrittenCheckpoint&) { throw Error("the store refused the row"); }),
               Error);
  EXPECT_EQ(read_checkpoint_meta(written.path).reason, "interval") << "the old checkpoint keeps its name";
  EXPECT_THROW(write_checkpoint(dir.path().string(), sample(8),
                                [](const WrittenCheckpoint&) { throw Error("the store refused the row"); }),
               Error);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir.path())) left.push_back(entry.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{"step-00000004"}) << "no step-00000008, no staging left";
}

TEST(CheckpointFormat, RefusesTruncatedMissingAndNewerCheckpoints) {
  ScratchDir dir;
  const auto path = write_checkpoint(dir.path().string(), sample(1)).path;
  const auto weights = fs::path(path) / kWeightsFile;
  fs::resize_file(weights, fs::file_size(weights) - 8);
  EXPECT_NE(error_of([&] { read_checkpoint_meta(path); }).find("model.safetensors has"), std::string::npos);

  const auto other = write_checkpoint(dir.path().string(), sample(2)).path;
  fs::remove(fs::path(other) / kTrainerStateFile);
  EXPECT_NE(error_of([&] { read_checkpoint_meta(other); }).find("incomplete: trainer.pt is missing"), std::string::npos);

  const auto newer = write_checkpoint(dir.path().string(), sample(3)).path;
  std::ofstream(fs::path(newer) / kMetaFile)
      << R"({"format": "orchestrate-checkpoint", "format_version": 99, "orchestrate_version": "9.0.0"})";
  const auto why = error_of([&] { read_checkpoint_meta(newer); });
  EXPECT_NE(why.find("format version 99, written by orchestrate 9.0.0"), std::string::npos) << why;
  EXPECT_NE(why.find("use a newer orchestrate"), std::string::npos) << why;

  EXPECT_NE(error_of([&] { read_checkpoint_meta(dir.file("nowhere")); }).find("does not exist"), std::string::npos);
  EXPECT_NE(error_of([&] { read_checkpoint_meta(dir.path().string()); }).find("not an orchestrate checkpoint"),
            std::string::npos);
}

// Neither LibTorch's archive reader nor the safetensors format checks its
// contents: a bit flipped in a tensor's bytes loaded silently, and a resumed
// run went on from damaged state. The CRC-32C written with each file finds it.
TEST(CheckpointFormat, RefusesAFileWithAFlippedBitAndNamesItsChecksums) {
  ScratchDir dir;
  for (const char* file : {kWeightsFile, kTrainerStateFile, kRecipeFile}) {
    const auto path = write_checkpoint(dir.path().string(), sample(8)).path;
    EXPECT_NO_THROW(read_checkpoint_meta(path));
    const fs::path damaged = fs::path(path) / file;
    std::fstream bytes(damaged, std::ios::binary | std::ios::in | std::ios::out);
    bytes.seekg(static_cast<std::streamoff>(fs::file_size(damaged) - 3));
    const char byte = static_cast<char>(bytes.get() ^ 0x10);
    bytes.seekp(static_cast<std::streamoff>(fs::file_size(damaged) - 3));
    bytes.put(byte);
    bytes.close();
    const auto why = error_of([&] { read_checkpoint_meta(path); });
    EXPECT_NE(why.find(std::string("is damaged: ") + file + "'s CRC-32C is 0x"), std::string::npos) << why;
    EXPECT_NE(why.find("a flipped bit on the disk, or an altered file); use an older checkpoint"), std::string::npos)
        << why;
  }
}

// A checkpoint written before the CRCs were is checked by its sizes alone.
TEST(CheckpointFormat, ACheckpointWithoutChecksumsStillReads) {
  ScratchDir dir;
  const auto path = write_checkpoint(dir.path().string(), sample(9)).path;
  const fs::path meta_file = fs::path(path) / kMetaFile;
  std::ifstream in(meta_file);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  in.close();
  const auto start = text.find("\"file_crc32c\"");
  ASSERT_NE(start, std::string::npos) << text;
  // Keys are written in order: "format" follows, so the comma after the field goes with it.
  const auto end = text.find(',', text.find('}', start));
  text.erase(start, end + 1 - start);
  std::ofstream(meta_file) << text;
  const CheckpointMeta meta = read_checkpoint_meta(path);
  EXPECT_TRUE(meta.file_crc32c.empty());
  EXPECT_EQ(meta.step, 9);
}

// checkpoint.json is read back as hostile input: a field edited by hand or
// damaged is named, never used to index or allocate (a wrong step ended in
// a vector range error in the trainer).
TEST(CheckpointFormat, RefusesATamperedDescription) {
  ScratchDir dir;
  const auto path = write_checkpoint(dir.path().string(), sample(6)).path;
  const fs::path meta_file = fs::path(path) / kMetaFile;
  std::string original;
  {
    std::ifstream in(meta_file);
    original.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto tampered = [&](const std::string& from, const std::string& to) {
    std::string text = original;
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    std::ofstream(meta_file, std::ios::trunc) << text;
    const std::string why = error_of([&] { read_checkpoint_meta(path); });
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
    EXPECT_NE(why.find("use an older checkpoint"), std::string::npos) << why;
    return why;
  };
  EXPECT_NE(tampered("\"step\": 6", "\"step\": 600").find("step 600 does not match the directory's name step-00000006"),
            std::string::npos);
  EXPECT_NE(tampered("\"step\": 6", "\"step\": -6").find("step -6 is negative"), std::string::npos);
  // A number too large for int64 is a float to the JSON parser (found by fuzzing).
  EXPECT_NE(tampered("\"step\": 6", "\"step\": 7.6e43").find("step is not an integer (7.6e+43)"), std::string::npos);
  EXPECT_NE(tampered("\"format_version\": 1", "\"format_version\": -1").find("format_version -1 is not 1 or more"),
            std::string::npos);
  EXPECT_NE(tampered("\"world_size\": 1", "\"world_size\": 0").find("world_size 0"), std::string::npos);
  EXPECT_NE(tampered("\"updates_per_epoch\": 0", "\"updates_per_epoch\": -3").find("updates_per_epoch -3 is negative"),
            std::string::npos);
  EXPECT_NE(tampered("\"step\": 6", "\"step\": \"six\"").find("checkpoint.json is damaged"), std::string::npos);
  EXPECT_NE(tampered("\"recipe.toml\"", "\"../../escape\"").find("names '../../escape', which is not a checkpoint file"),
            std::string::npos);
  EXPECT_NE(tampered("\"metrics\": {", "\"metrics\": {\"x\": " + std::string(1000, '[')).find("nested deeper than 64"),
            std::string::npos);
  std::ofstream(meta_file, std::ios::trunc) << original;
  EXPECT_EQ(read_checkpoint_meta(path).step, 6);
}

// A directory named like a checkpoint with a step too large for int64 is no
// checkpoint; listing used to throw "stoll", which failed the save.
TEST(CheckpointFormat, AnOutOfRangeStepNameIsNotACheckpoint) {
  ScratchDir dir;
  write_checkpoint(dir.path().string(), sample(10));
  const auto huge = dir.path() / "step-99999999999999999999999";
  fs::copy(dir.path() / "step-00000010", huge, fs::copy_options::recursive);
  EXPECT_EQ(checkpoints_in(dir.path().string()).size(), 1u);
}

TEST(CheckpointFormat, ACrashedSaveIsNeverListedAndIsCleanedUp) {
  ScratchDir dir;
  write_checkpoint(dir.path().string(), sample(10));
  // What a crash mid-save leaves: a staged directory without its description.
  const auto staged = dir.path() / ".staging-step-00000020-4242";
  fs::create_directories(staged);
  std::ofstream(staged / kWeightsFile) << "half";
  // And a crash between publish_directory's two renames.
  const auto aside = dir.path() / "step-00000030.replaced";
  fs::copy(dir.path() / "step-00000010", aside, fs::copy_options::recursive);
  EXPECT_EQ(checkpoints_in(dir.path().string()).size(), 1u);

  remove_stale_staging(dir.path().string());
  EXPECT_FALSE(fs::exists(staged));
  EXPECT_FALSE(fs::exists(aside));
  EXPECT_TRUE(fs::exists(dir.path() / "step-00000030"));  // the old copy is restored under its name
  EXPECT_EQ(checkpoints_in(dir.path().string()).size(), 2u);
}

}  // namespace
}  // namespace orchestrate
