// The plugin's own unit test, on the SDK's test helpers (orchestrate::test_support).
#include <gtest/gtest.h>

#include <fstream>

#include "orchestrate/dataset.h"
#include "orchestrate/error.h"
#include "orchestrate/params.h"
#include "orchestrate/testing/plugin_under_test.h"
#include "orchestrate/testing/scratch_dir.h"

TEST(CsvManifest, RegistersWithTheSharedBadDataKeys) {
  const auto& entry = orchestrate::testing::plugin_under_test().datasets().get("csv_manifest");
  EXPECT_NE(entry.info.schema.find("on_corrupt"), nullptr);
  EXPECT_NE(entry.info.schema.find("max_corrupt_fraction"), nullptr);
  EXPECT_NE(entry.info.schema.find("channels"), nullptr);
}

TEST(CsvManifest, AMalformedLineIsAnErrorNamingFileAndLine) {
  orchestrate::testing::ScratchDir dir;
  const std::string manifest = dir.file("train.csv");
  std::ofstream(manifest) << "path,label\na.png,1\nb.png\n";
  const auto& entry = orchestrate::testing::plugin_under_test().datasets().get("csv_manifest");
  orchestrate::Params params;
  for (const auto& spec : entry.info.schema.specs())
    if (spec.default_value) params.set(spec.name, *spec.default_value);
  params.set("train", manifest);
  params.set("test", manifest);
  try {
    entry.create(params, orchestrate::DatasetContext{orchestrate::DatasetSplit::train});
    FAIL() << "no error";
  } catch (const orchestrate::DataError& error) {
    EXPECT_EQ(std::string(error.what()), "[data] csv_manifest: " + manifest +
                                             ":3: expected \"path,label\" with a label >= 0, got \"b.png\"");
  }
}
