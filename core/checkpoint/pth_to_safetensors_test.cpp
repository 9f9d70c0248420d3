// scripts/pth_to_safetensors, run with the project's Python; its output is
// read back with this library's reader.
#include <gtest/gtest.h>

#include <filesystem>

#include "build_paths.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/safetensors_testing.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate {
namespace {

using testing::python_string;
using testing::ScratchDir;

// Python defining convert(args): runs the converter, returns its exit code and output.
const std::string kPythonConvert = std::string(R"(
import subprocess, sys
def convert(*args):
    r = subprocess.run([sys.executable, )") + python_string(std::string(build_paths::kSourceDir) + "/scripts/pth_to_safetensors") + R"(, *args],
                       capture_output=True, text=True)
    return {"returncode": r.returncode, "stdout": r.stdout, "stderr": r.stderr}
)";

TEST(PthToSafetensors, ConvertsStateDictsWithTiedViewsAndNonContiguousTensors) {
  ScratchDir dir;
  const auto reference = testing::run_safetensors_reference(kPythonConvert + R"(
torch.manual_seed(0)
weight = torch.randn(4, 3)
state_dict = {
    "encoder.weight": weight, "decoder.weight": weight,  # tied: one storage, two names
    "encoder.row": weight[1],                            # a view into that storage
    "proj.weight": torch.randn(3, 5).t(),                # non-contiguous
    "norm.weight": torch.randn(3).half(), "norm.num_batches_tracked": torch.tensor(7),
}
plain, nested = )" + python_string(dir.file("plain.pth")) + ", " + python_string(dir.file("nested.pt")) + R"(
output = )" + python_string(dir.file("out.safetensors")) + R"(
torch.save(state_dict, plain)
torch.save({"model": state_dict, "epoch": 3}, nested)
print(json.dumps({"plain": convert(plain), "nested": convert(nested, output), "tensors": describe(state_dict)}))
)");
  for (const auto* run : {"plain", "nested"}) {
    EXPECT_EQ(reference.at(run).at("returncode"), 0) << reference.at(run).at("stderr");
    EXPECT_NE(reference.at(run).at("stdout").get<std::string>().find("wrote 6 tensors"), std::string::npos)
        << reference.at(run);
  }
  for (const auto* output : {"plain.safetensors", "out.safetensors"}) {
    const NamedTensors content = read_safetensors(dir.file(output));
    testing::expect_matches_description(content, reference.at("tensors"));
    EXPECT_EQ(content.metadata.at("format"), "pt");
  }
}

TEST(PthToSafetensors, RefusesAFileThatHoldsNoStateDict) {
  ScratchDir dir;
  const auto reference = testing::run_safetensors_reference(kPythonConvert + R"(
path = )" + python_string(dir.file("optimizer.pth")) + R"(
torch.save({"epoch": 3, "lr": 0.1}, path)
print(json.dumps(convert(path)))
)");
  EXPECT_EQ(reference.at("returncode"), 1);
  const auto error = reference.at("stderr").get<std::string>();
  EXPECT_NE(error.find("optimizer.pth holds no state_dict (a dict with keys 'epoch', 'lr')"), std::string::npos)
      << error;
  EXPECT_NE(error.find("under 'state_dict' or 'model'"), std::string::npos) << error;
  EXPECT_FALSE(std::filesystem::exists(dir.file("optimizer.safetensors")));
}

TEST(PthToSafetensors, PrintsUsageWithoutArguments) {
  // Plain run_python: printing the usage needs neither torch nor safetensors.
  const auto reference =
      nlohmann::json::parse(testing::run_python("import json\n" + kPythonConvert + "print(json.dumps(convert()))\n"));
  EXPECT_EQ(reference.at("returncode"), 2);
  EXPECT_NE(reference.at("stderr").get<std::string>().find("usage: pth_to_safetensors INPUT.pth"), std::string::npos)
      << reference.at("stderr");
}

}  // namespace
}  // namespace orchestrate
