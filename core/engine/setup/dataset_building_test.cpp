// build_dataset (orchestrate/dataset.h): a wrapper builds its inner dataset
// through the registry, with the checks a recipe table gets.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "orchestrate/dataset.h"
#include "orchestrate/error.h"
#include "orchestrate/params.h"
#include "orchestrate/registry.h"

namespace orchestrate {
namespace {

// A dataset of `size` examples that remembers its split.
class Sized final : public Dataset {
 public:
  Sized(std::int64_t size, DatasetSplit split) : size_(size), split_(split) {}
  DatasetInfo info() const override { return {1, 2, 2, split_ == DatasetSplit::train ? 3 : 4, {}}; }
  std::int64_t size() const override { return size_; }
  Example example(const SampleRequest&) const override { return {}; }

 private:
  std::int64_t size_;
  DatasetSplit split_;
};

class BuildDataset : public ::testing::Test {
 protected:
  BuildDataset() {
    registry.datasets().add("sized", "a dataset of `size` examples",
                            {int_param("size", 5, "examples").at_least(1), string_param("name", std::nullopt, "required")},
                            [](const Params& params, const DatasetContext& context) {
                              return std::make_unique<Sized>(params.integer("size"), context.split);
                            });
  }
  std::string error_of(const DatasetContext& context, const std::string& name, const Params& given) {
    try {
      build_dataset(context, name, given);
    } catch (const Error& error) {
      return error.what();
    }
    return "";
  }
  Registry registry;
};

TEST_F(BuildDataset, BuildsTheNamedDatasetForTheSameSplitWithDefaultsUnderTheGivenKeys) {
  Params given;
  given.set("name", std::string("inner"));
  const auto test = build_dataset(DatasetContext{DatasetSplit::test, nullptr, &registry}, "sized", given);
  EXPECT_EQ(test->size(), 5);
  EXPECT_EQ(test->info().num_classes, 4);  // the test split's
  given.set("size", std::int64_t{9});
  EXPECT_EQ(build_dataset(DatasetContext{DatasetSplit::train, nullptr, &registry}, "sized", given)->size(), 9);
}

TEST_F(BuildDataset, RefusesWhatARecipeTableWouldBeRefused) {
  const DatasetContext context{DatasetSplit::train, nullptr, &registry};
  Params given;
  EXPECT_EQ(error_of(context, "sized", given), "dataset 'sized': missing required key 'name'");
  given.set("name", std::string("inner"));
  given.set("size", std::int64_t{0});
  EXPECT_EQ(error_of(context, "sized", given), "dataset 'sized': 'size' must be >= 1");
  given.set("size", 2.5);
  EXPECT_EQ(error_of(context, "sized", given), "dataset 'sized': 'size' must be int, got float");
  Params unknown;
  unknown.set("sise", std::int64_t{3});
  EXPECT_EQ(error_of(context, "sized", unknown), "dataset 'sized': unknown key 'sise'");
  EXPECT_NE(error_of(context, "absent", given).find("unknown dataset 'absent'"), std::string::npos);
  EXPECT_NE(error_of(DatasetContext{DatasetSplit::train}, "sized", given).find("has no registry"), std::string::npos);
}

}  // namespace
}  // namespace orchestrate
