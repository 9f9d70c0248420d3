#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "decoded_image_cache.h"
#include "orchestrate/dataset.h"
#include "orchestrate/error.h"
#include "orchestrate/image/image_bombs_testing.h"
#include "orchestrate/image/image_transforms.h"
#include "orchestrate/testing/dataset_batches.h"
#include "orchestrate/testing/plugin_under_test.h"
#include "orchestrate/testing/python_reference.h"
#include "orchestrate/testing/scratch_dir.h"
#include "orchestrate/testing/test_images.h"
#include "split_files.h"

namespace orchestrate::image_folder {
namespace {

using orchestrate::testing::encode_png;
using orchestrate::testing::ScratchDir;
using orchestrate::testing::test_image;

struct Built {
  std::unique_ptr<Dataset> dataset;
  std::string stderr_text;
};

void write_file(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

at::Tensor expected_image(std::int64_t id) { return test_image(id).permute({2, 0, 1}).to(at::kFloat) / 255.0; }

std::vector<std::int64_t> all_indices(const Dataset& dataset) {
  std::vector<std::int64_t> indices(static_cast<std::size_t>(dataset.size()));
  for (std::size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<std::int64_t>(i);
  return indices;
}

// root/train/{cat,ant,bee}/ and root/val/ of 28x28 grey PNGs: image id N is
// in file N.png; class folders are listed out of order on purpose.
class ImageFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    add("train/cat", 0);
    add("train/cat", 1);
    add("train/ant", 2);
    add("train/bee", 3);
    add("train/bee", 4);
    add("val/ant", 5);
    add("val/bee", 6);
    add("val/cat", 7);
  }

  std::string add(const std::string& folder, std::int64_t id, const std::string& name = "") {
    const std::string path = root_.file(folder + "/" + (name.empty() ? std::to_string(id) + ".png" : name));
    write_file(path, encode_png(test_image(id)));
    return path;
  }

  Params params(const std::function<void(Params&)>& customize = {}) const {
    auto& entry = orchestrate::testing::plugin_under_test().datasets().get("image_folder");
    auto p = default_params(entry.info.schema);
    p.set("root", root_.path().string());
    p.set("channels", std::int64_t{1});
    p.set("height", std::int64_t{28});
    p.set("width", std::int64_t{28});
    if (customize) customize(p);
    return p;
  }

  Built build(DatasetSplit split, const std::function<void(Params&)>& customize = {}) const {
    auto& entry = orchestrate::testing::plugin_under_test().datasets().get("image_folder");
    std::ostringstream captured;
    auto* previous = std::cerr.rdbuf(captured.rdbuf());
    Built built;
    try {
      built.dataset = entry.create(params(customize), split);
    } catch (...) {
      std::cerr.rdbuf(previous);
      throw;
    }
    std::cerr.rdbuf(previous);
    built.stderr_text = captured.str();
    return built;
  }

  // The DataError message of building `split`, or "" if none.
  std::string error_of(DatasetSplit split, const std::function<void(Params&)>& customize = {}) const {
    try {
      build(split, customize);
    } catch (const DataError& error) {
      return error.what();
    }
    return "";
  }

  std::string path(const std::string& relative) const { return root_.file(relative); }

  ScratchDir root_;
};

auto skip_up_to(double fraction) {
  return [fraction](Params& p) {
    p.set("on_corrupt", std::string("skip"));
    p.set("max_corrupt_fraction", fraction);
  };
}

TEST_F(ImageFolder, LabelsComeFromSortedClassFoldersAndPngPixelsAreExact) {
  const auto train = build(DatasetSplit::train).dataset;
  EXPECT_EQ(train->info().class_names, (std::vector<std::string>{"ant", "bee", "cat"}));
  EXPECT_EQ(train->info().num_classes, 3);
  EXPECT_EQ(train->info().channels, 1);
  ASSERT_EQ(train->size(), 5);
  // Listed by class, then by file: ant/2, bee/3, bee/4, cat/0, cat/1.
  const auto batch = orchestrate::testing::float_batch(*train, all_indices(*train));
  EXPECT_TRUE(batch.labels.equal(at::tensor(std::vector<std::int64_t>{0, 1, 1, 2, 2})));
  const std::vector<std::int64_t> ids{2, 3, 4, 0, 1};
  for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_TRUE(batch.images[i].equal(expected_image(ids[i]))) << i;

  const auto val = build(DatasetSplit::test).dataset;
  ASSERT_EQ(val->size(), 3);
  EXPECT_EQ(val->info().class_names, (std::vector<std::string>{"ant", "bee", "cat"}));
  const auto val_batch = orchestrate::testing::float_batch(*val, {2, 0});
  EXPECT_TRUE(val_batch.images[0].equal(expected_image(7)));
  EXPECT_TRUE(val_batch.labels.equal(at::tensor(std::vector<std::int64_t>{2, 0})));
}

TEST_F(ImageFolder, ContentDecidesTheFormatNotTheName) {
  add("train/ant", 8, "really_a_png.jpg");
  add("train/ant", 9, "no_extension");
  const auto train = build(DatasetSplit::train).dataset;
  ASSERT_EQ(train->size(), 7);
  const auto batch = orchestrate::testing::float_batch(*train, {0, 1, 2});  // ant/2.png, ant/no_extension, ant/really_a_png.jpg
  EXPECT_TRUE(batch.images[0].equal(expected_image(2)));
  EXPECT_TRUE(batch.images[1].equal(expected_image(9)));
  EXPECT_TRUE(batch.images[2].equal(expected_image(8)));
}

TEST_F(ImageFolder, JpegFilesDecodeLikePillowAndNestedFoldersBelongToTheirClass) {
  const std::string out = orchestrate::testing::run_python(R"(
import os, numpy, PIL.Image as I
os.makedirs(")" + path("train/ant/deeper") + R"(")
y, x = numpy.mgrid[0:28, 0:28]
I.fromarray(((x * 9 + y * 3) % 256).astype(numpy.uint8)).save(")" + path("train/ant/deeper/photo.jpeg") + R"(", quality=90)
print(numpy.asarray(I.open(")" + path("train/ant/deeper/photo.jpeg") + R"(").convert("L")).tobytes().hex())
)");
  const auto train = build(DatasetSplit::train).dataset;
  ASSERT_EQ(train->size(), 6);  // ant/2.png, ant/deeper/photo.jpeg, ...
  const auto batch = orchestrate::testing::float_batch(*train, {1});
  EXPECT_EQ(batch.labels.item<std::int64_t>(), 0);
  const auto ours = (batch.images[0][0] * 255).round().to(at::kInt);
  auto pillow = at::empty({28 * 28}, at::kInt);
  for (int i = 0; i < 28 * 28; ++i) pillow[i] = std::stoi(out.substr(2 * i, 2), nullptr, 16);
  EXPECT_LE((ours.reshape({-1}) - pillow).abs().max().item<int>(), 1);  // image_decode_test: within one level
}

TEST_F(ImageFolder, ValidationOrTestFolderServesWhenThereIsNoVal) {
  std::filesystem::rename(path("val"), path("validation"));
  EXPECT_EQ(build(DatasetSplit::test).dataset->size(), 3);
  std::filesystem::rename(path("validation"), path("test"));
  EXPECT_EQ(build(DatasetSplit::test).dataset->size(), 3);
}

TEST_F(ImageFolder, ResizesAndConvertsWithTheSharedKernel) {
  const auto train = build(DatasetSplit::train, [](Params& p) {
    p.set("channels", std::int64_t{3});
    p.set("height", std::int64_t{14});
    p.set("width", std::int64_t{20});
  }).dataset;
  const auto images = orchestrate::testing::float_batch(*train, {0}).images;
  EXPECT_EQ(images.sizes(), (at::IntArrayRef{1, 3, 14, 20}));
  // Resized as uint8, as the pixels are stored: the kernel the preprocessing presets use.
  const auto resized = orchestrate::resize_pixels(test_image(2).expand({28, 28, 3}).contiguous(), 14, 20);
  EXPECT_TRUE(images[0].equal(resized.permute({2, 0, 1}).to(at::kFloat).div_(255.0)));
}

TEST_F(ImageFolder, NumClassesMustMatchTheClassFolders) {
  EXPECT_EQ(error_of(DatasetSplit::train, [&](Params& p) { p.set("num_classes", std::int64_t{5}); }),
            "[data] image_folder: " + root_.path().string() + " has 3 class folders (ant, bee, cat) but num_classes = 5; point "
            "root at the right folder or set num_classes = 3");
  EXPECT_EQ(build(DatasetSplit::train, [&](Params& p) { p.set("num_classes", std::int64_t{3}); }).dataset->info().num_classes,
            3);
}

TEST_F(ImageFolder, MissingRootEmptyClassAndUnmatchedClassesAreOneLineErrors) {
  EXPECT_EQ(error_of(DatasetSplit::train, [&](Params& p) { p.set("root", path("nowhere")); }),
            "[data] image_folder: " + path("nowhere") +
                ": no such directory; set [data] root to the folder holding the class folders (or train/ and val/)");

  std::filesystem::create_directories(path("val/dog"));
  EXPECT_EQ(error_of(DatasetSplit::test), "[data] image_folder: class folder " + path("val/dog") +
                                              " holds no files; put its images there or remove it");
  add("val/dog", 10);
  EXPECT_EQ(error_of(DatasetSplit::train), "[data] image_folder: class 'dog' is in " + path("val") + " but not in " +
                                               path("train") + "; both splits need a folder for every class");
  std::filesystem::remove_all(path("val/dog"));
  std::filesystem::remove_all(path("val/bee"));
  EXPECT_EQ(error_of(DatasetSplit::test), "[data] image_folder: class 'bee' is in " + path("train") + " but not in " +
                                              path("val") + "; both splits need a folder for every class");

  std::filesystem::remove_all(path("train"));
  EXPECT_EQ(error_of(DatasetSplit::train), "[data] image_folder: " + root_.path().string() +
                                               " has a val folder but no train folder; put the training images in " +
                                               path("train") + "/<class>/");
  std::filesystem::remove_all(path("val"));
  add("only", 1);
  EXPECT_EQ(error_of(DatasetSplit::train),
            "[data] image_folder: " + root_.path().string() +
                " holds one class folder; it needs a sub-folder per class (at least two), each holding that class's "
                "images");
}

// root/<class>/ without split folders: val_fraction of each class is the test split.
class ImageFolderByFraction : public ImageFolder {
 protected:
  void SetUp() override {
    for (int id = 0; id < 30; ++id) add(std::string("c") + std::to_string(id % 3), id);
  }
};

std::vector<std::string> names_of(const std::vector<std::int64_t>& ids) {
  std::vector<std::string> names;
  for (const auto id : ids) names.push_back(std::to_string(id) + ".png");
  return names;
}

TEST_F(ImageFolderByFraction, SplitIsStratifiedDisjointCompleteAndFixedBySeed) {
  const auto train = build(DatasetSplit::train, [](Params& p) { p.set("val_fraction", 0.2); }).dataset;
  const auto test = build(DatasetSplit::test, [](Params& p) { p.set("val_fraction", 0.2); }).dataset;
  ASSERT_EQ(train->size(), 24);
  ASSERT_EQ(test->size(), 6);
  EXPECT_TRUE(orchestrate::testing::float_batch(*test, all_indices(*test)).labels.equal(at::tensor(std::vector<std::int64_t>{0, 0, 1, 1, 2, 2})));
  // Every image once, in one split or the other.
  std::vector<int> seen(30, 0);
  for (const auto* dataset : {train.get(), test.get()}) {
    const auto images = orchestrate::testing::float_batch(*dataset, all_indices(*dataset)).images;
    for (std::int64_t i = 0; i < images.size(0); ++i)
      for (int id = 0; id < 30; ++id)
        if (images[i].equal(expected_image(id))) ++seen[id];
  }
  EXPECT_EQ(seen, std::vector<int>(30, 1));

  // The rule, pinned (checked against a Python FNV-1a of the 8 little-endian
  // seed bytes then the name): class c0's files sorted by name.
  const auto c0 = names_of({0, 12, 15, 18, 21, 24, 27, 3, 6, 9});
  EXPECT_EQ(val_part(c0, 0.2, 0), (std::vector<std::size_t>{2, 8}));  // 15.png, 6.png
  EXPECT_EQ(val_part(c0, 0.2, 1), (std::vector<std::size_t>{0, 9}));  // 0.png, 9.png
  EXPECT_EQ(val_part(c0, 0.01, 0).size(), 1u);  // at least one
  EXPECT_EQ(val_part(c0, 0.9, 0).size(), 9u);   // never all
  const auto again = build(DatasetSplit::test, [](Params& p) { p.set("val_fraction", 0.2); }).dataset;
  EXPECT_TRUE(orchestrate::testing::float_batch(*again, all_indices(*again)).images.equal(orchestrate::testing::float_batch(*test, all_indices(*test)).images));
}

TEST_F(ImageFolderByFraction, ZeroFractionOrASingleFileClassCannotBeSplit) {
  EXPECT_EQ(error_of(DatasetSplit::test, [](Params& p) { p.set("val_fraction", 0.0); }),
            "[data] image_folder: " + root_.path().string() +
                " has no val, validation or test folder to evaluate on, and val_fraction = 0; add one beside train/, "
                "or set val_fraction");
  add("c3", 99);
  EXPECT_EQ(error_of(DatasetSplit::train), "[data] image_folder: class folder " + path("c3") +
                                               " holds 1 file; a val_fraction split needs at least 2 per class");
}

TEST_F(ImageFolderByFraction, LimitTakesTheClassesInTurn) {
  const auto train = build(DatasetSplit::train, [](Params& p) { p.set("limit", std::int64_t{4}); }).dataset;
  ASSERT_EQ(train->size(), 4);
  EXPECT_TRUE(orchestrate::testing::float_batch(*train, all_indices(*train)).labels.equal(at::tensor(std::vector<std::int64_t>{0, 0, 1, 2})));
}

// Bad files: found when the dataset is built, named by path and cause.
class ImageFolderBadFiles : public ImageFolder {
 protected:
  void SetUp() override {
    ImageFolder::SetUp();
    write_file(path("train/ant/empty.png"), "");
    write_file(path("train/bee/notes.png"), "these are notes, not pixels\n");
    orchestrate::testing::run_python(R"(
import numpy, PIL.Image as I
I.fromarray(numpy.arange(28 * 28, dtype=numpy.uint8).reshape(28, 28)).save(")" + path("cut.jpg") + R"(", quality=90)
)");
    std::ifstream in(path("cut.jpg"), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    write_file(path("train/cat/truncated.jpg"), bytes.str().substr(0, bytes.str().size() / 2));
    std::filesystem::remove(path("cut.jpg"));
  }
};

TEST_F(ImageFolderBadFiles, FailNamesTheFirstBadFileAndHowToGoOn) {
  EXPECT_EQ(error_of(DatasetSplit::train),
            "[data] image_folder: " + path("train/ant/empty.png") +
                ": zero-byte file (3 bad files of 8 in the train split; fix or remove the file, or on_corrupt = "
                "\"skip\" leaves bad files out)");
  std::filesystem::remove(path("train/ant/empty.png"));
  EXPECT_EQ(error_of(DatasetSplit::train),
            "[data] image_folder: " + path("train/bee/notes.png") +
                ": neither a JPEG nor a PNG file (its first bytes are not an image signature) (2 bad files of 7 in the "
                "train split; fix or remove the file, or on_corrupt = \"skip\" leaves bad files out)");
  std::filesystem::remove(path("train/bee/notes.png"));
  const auto message = error_of(DatasetSplit::train);
  EXPECT_EQ(message.rfind("[data] image_folder: " + path("train/cat/truncated.jpg") + ": corrupt JPEG (", 0), 0u)
      << message;
  EXPECT_NE(message.find(") (1 bad file of 6 in the train split; fix or remove"), std::string::npos) << message;
}

// A decompression bomb (a few hundred bytes declaring 100000 x 100000) is
// a bad file like any other, refused from its header before it is decoded.
TEST_F(ImageFolder, ADecompressionBombIsABadFileUnderTheLimitItsKeyMoves) {
  write_file(path("train/cat/bomb.png"), orchestrate::testing::png_declaring(100000, 100000));
  EXPECT_EQ(error_of(DatasetSplit::train),
            "[data] image_folder: " + path("train/cat/bomb.png") +
                ": image of 100000x100000 = 10000000000 pixels exceeds the limit of 89478485 (a decompression "
                "bomb?); raise the dataset's max_image_pixels if it is genuine (1 bad file of 6 in the train split; "
                "fix or remove the file, or on_corrupt = \"skip\" leaves bad files out)");
  const auto skipped = build(DatasetSplit::train, skip_up_to(0.5));
  EXPECT_EQ(skipped.dataset->size(), 5);
  EXPECT_NE(skipped.stderr_text.find("skipped 1 bad file of 6 in the train split"), std::string::npos)
      << skipped.stderr_text;
  // The key moves the limit: 28 x 28 = 784 pixels pass at 784, not at 783.
  const auto at = [](std::int64_t limit) { return [limit](Params& p) { p.set("max_image_pixels", limit); }; };
  std::filesystem::remove(path("train/cat/bomb.png"));
  EXPECT_EQ(error_of(DatasetSplit::train, at(784)), "");
  EXPECT_NE(error_of(DatasetSplit::train, at(783)).find("exceeds the limit of 783"), std::string::npos);
}

TEST_F(ImageFolderBadFiles, SkipLeavesThemOutAndReportsTheCount) {
  const auto skipped = build(DatasetSplit::train, skip_up_to(0.5));
  ASSERT_EQ(skipped.dataset->size(), 5);
  EXPECT_EQ(skipped.stderr_text, "[data] image_folder: skipped 3 bad files of 8 in the train split; the first: " +
                                     path("train/ant/empty.png") + ": zero-byte file\n");
  EXPECT_TRUE(orchestrate::testing::float_batch(*skipped.dataset, all_indices(*skipped.dataset))
                  .labels.equal(at::tensor(std::vector<std::int64_t>{0, 1, 1, 2, 2})));
  EXPECT_EQ(error_of(DatasetSplit::train, skip_up_to(0.3)),
            "[data] image_folder: 3 bad files of 8 in the train split (37.5 % of them, more than "
            "max_corrupt_fraction = 0.3); the first: " +
                path("train/ant/empty.png") + ": zero-byte file");
}

TEST_F(ImageFolderBadFiles, WithoutVerificationOnlyZeroByteFilesAreFoundEarly) {
  auto trusting = [](Params& p) {
    p.set("verify_images", false);
    skip_up_to(0.5)(p);
  };
  const auto built = build(DatasetSplit::train, trusting);
  ASSERT_EQ(built.dataset->size(), 7);  // notes.png and truncated.jpg are in
  EXPECT_NE(built.stderr_text.find("skipped 1 bad file of 8"), std::string::npos) << built.stderr_text;
  EXPECT_NO_THROW(orchestrate::testing::float_batch(*built.dataset, {0}));
  // With skip, the file found bad when read is replaced by the next one that reads.
  EXPECT_NO_THROW(orchestrate::testing::float_batch(*built.dataset, {2}));  // bee/4.png
  EXPECT_NO_THROW(orchestrate::testing::float_batch(*built.dataset, {3}));  // bee/notes.png, replaced
  // With fail, the read fails naming the file (empty.png would fail the build).
  std::filesystem::remove(path("train/ant/empty.png"));
  const auto failing = build(DatasetSplit::train, [](Params& p) { p.set("verify_images", false); });
  try {
    orchestrate::testing::float_batch(*failing.dataset, {3});  // bee/notes.png
    FAIL() << "expected a DataError";
  } catch (const DataError& error) {
    EXPECT_EQ(std::string(error.what()), "[data] image_folder: " + path("train/bee/notes.png") +
                                             ": neither a JPEG nor a PNG file (its first bytes are not an image "
                                             "signature) (found when read, in the train split; fix or remove the "
                                             "file, or on_corrupt = \"skip\" leaves bad files out)");
  }
}

TEST_F(ImageFolder, CachedImagesAreServedAfterTheFileIsGoneAndBatchesAreThreadSafe) {
  const auto train = build(DatasetSplit::train, [](Params& p) { p.set("cache", true); }).dataset;
  const std::vector<std::int64_t> indices{4, 3, 2, 1, 0, 1};
  const auto expected = orchestrate::testing::float_batch(*train, indices);
  std::vector<Batch> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) threads.emplace_back([&] { result = orchestrate::testing::float_batch(*train, indices); });
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_TRUE(result.images.equal(expected.images));
  const auto uncached = build(DatasetSplit::test).dataset;
  std::filesystem::remove_all(path("train"));
  EXPECT_TRUE(orchestrate::testing::float_batch(*train, indices).images.equal(expected.images));  // from memory
  std::filesystem::remove_all(path("val"));
  EXPECT_THROW(orchestrate::testing::float_batch(*uncached, {0}), DataError);
  EXPECT_THROW(orchestrate::testing::float_batch(*train, {5}), std::out_of_range);
}

TEST(DecodedImageCache, KeepsImagesUntilTheBudgetIsSpent) {
  DecodedImageCache cache(3, 1000);
  const auto image = at::zeros({20, 20, 1}, at::kByte);  // 400 bytes
  cache.offer(0, image);
  cache.offer(1, image);
  cache.offer(2, image);  // 1200 > 1000: not kept
  EXPECT_TRUE(cache.find(0).defined());
  EXPECT_TRUE(cache.find(1).defined());
  EXPECT_FALSE(cache.find(2).defined());
  EXPECT_EQ(cache.bytes_used(), 800u);
}

TEST(ImageFolderSchema, RootIsRequired) {
  const auto& schema = orchestrate::testing::plugin_under_test().datasets().get("image_folder").info.schema;
  auto p = default_params(schema);
  EXPECT_EQ(schema.broken_rules(p), (std::vector<std::string>{"root: say where the image folder is"}));
  // A root that is not there is the host's check, as for every dataset
  // (the key must name an existing directory), made when the recipe loads.
  const orchestrate::ParamSpec& root = *schema.find("root");
  EXPECT_EQ(root.must_exist, orchestrate::PathCheck::existing_directory);
  EXPECT_EQ(root.path_problem(std::string("/nowhere/flowers")), "\"/nowhere/flowers\" is not a directory (nothing is there)");
  EXPECT_EQ(root.path_problem(std::filesystem::temp_directory_path().string()), "");
  p.set("root", std::filesystem::temp_directory_path().string());
  EXPECT_TRUE(schema.broken_rules(p).empty());
}

}  // namespace
}  // namespace orchestrate::image_folder
