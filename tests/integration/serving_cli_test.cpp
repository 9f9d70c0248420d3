// The serving export as a user meets it: [export] at the end of a run and
// `export serving` of a checkpoint write numbered versions of a Triton
// repository entry; `predict` labels real Fashion-MNIST images saved as PNG
// and JPEG with what Python's torch.jit.load computes from the same model.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "build_paths.h"
#include "command_runner.h"
#include "orchestrate/testing/python_reference.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// One short training run shared by the tests: ConvNet on 12,000 real
// Fashion-MNIST images for one epoch, exported at the end.
class ServingCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir;
    const std::string recipe = std::string(orchestrate::build_paths::kSourceDir) + "/recipes/fashion_mnist_fast.toml";
    const auto trained = run_orchestrate(
        "run " + recipe + " -q --db " + db() + " --set run.epochs=1 --set data.limit=12000 --set run.threads=2" +
        " --set export.dir=" + repository() + " --set export.top_k=3");
    ASSERT_EQ(trained.exit_code, 0) << trained.output;
    ASSERT_NE(trained.output.find("serving export " + repository() + "/fashion_mnist_fast/1"), std::string::npos)
        << trained.output;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string db() { return dir_->file("runs.db"); }
  static std::string repository() { return dir_->file("repo"); }
  static fs::path model_dir() { return fs::path(repository()) / "fashion_mnist_fast"; }
  static ScratchDir* dir_;
};

ScratchDir* ServingCli::dir_ = nullptr;

TEST_F(ServingCli, RunExportsAtTheEndAndExportServingAddsTheNextVersion) {
  EXPECT_TRUE(fs::is_regular_file(model_dir() / "1" / "model.pt"));
  EXPECT_NE(read_text(model_dir() / "labels.txt").find("T-shirt/top\nTrouser\n"), std::string::npos);
  const auto again = run_orchestrate("export serving 1 --db " + db() + " --out " + repository() + " --top-k 3");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("as version 2 of " + model_dir().string()), std::string::npos) << again.output;
  EXPECT_TRUE(fs::is_regular_file(model_dir() / "2" / "model.pt"));
  // Provenance of version 2: the run's end checkpoint.
  const auto provenance = nlohmann::json::parse(read_text(model_dir() / "2" / "export.json"));
  EXPECT_EQ(provenance.at("run_id"), "1");
  EXPECT_EQ(provenance.at("model"), "convnet");
  EXPECT_NE(provenance.at("checkpoint").get<std::string>().find("step-"), std::string::npos);
  // Both exports are events of the training run.
  std::size_t exports = 0;
  for (const auto& event : RunStore(db()).events(1)) exports += event.kind == "export";
  EXPECT_EQ(exports, 2u);
  // Another signature under the same name is refused, and writes no version.
  const auto other = run_orchestrate("export serving 1 --db " + db() + " --out " + repository() + " --top-k 4");
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("config.pbtxt describes another model"), std::string::npos) << other.output;
  EXPECT_FALSE(fs::exists(model_dir() / "3"));
}

TEST_F(ServingCli, PredictLabelsPngAndJpegFilesAsTorchJitLoadDoes) {
  // 200 test-split images as PNG and JPEG (Pillow), and what Python computes
  // for them with torch.jit.load: the same decode, /255, the exported model.
  const std::string images = dir_->file("images");
  const std::string out = run_python(R"(
import gzip, numpy, os, torch, PIL.Image as I
d = ")" + images + R"("
os.makedirs(d, exist_ok=True)
raw = gzip.open("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz").read()
pixels = numpy.frombuffer(raw, dtype=numpy.uint8, offset=16).reshape(-1, 28, 28)[:200]
labels = numpy.frombuffer(gzip.open("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz").read(), dtype=numpy.uint8, offset=8)[:200]
m = torch.jit.load(")" + (model_dir() / "1" / "model.pt").string() + R"(")
files = []
for i, p in enumerate(pixels):
    name = d + "/%03d.%s" % (i, "png" if i % 2 == 0 else "jpg")
    I.fromarray(p).save(name, quality=95) if name.endswith("jpg") else I.fromarray(p).save(name)
    files.append(name)
decoded = torch.stack([torch.from_numpy(numpy.asarray(I.open(f).convert("L"))).float().div(255) for f in files])
with torch.no_grad():
    logits, indices, confidences = m(decoded.unsqueeze(1))
for f, label, idx, conf in zip(files, labels, indices[:, 0], confidences[:, 0]):
    print(f, int(label), int(idx), "%.4f" % float(conf))
)");
  std::istringstream lines(out);
  std::vector<std::string> files;
  std::vector<int> truth, expected;
  std::vector<double> expected_confidence;
  for (std::string file; lines >> file;) {
    int label = 0, predicted = 0;
    double confidence = 0;
    lines >> label >> predicted >> confidence;
    files.push_back(file);
    truth.push_back(label);
    expected.push_back(predicted);
    expected_confidence.push_back(confidence);
  }
  ASSERT_EQ(files.size(), 200u) << out;
  std::string arguments;
  for (const auto& file : files) arguments += " " + file;
  const auto predicted = run_orchestrate("predict " + model_dir().string() + arguments + " --top-k 1 --format json");
  ASSERT_EQ(predicted.exit_code, 0) << predicted.output;
  const auto rows = nlohmann::json::parse(predicted.output);
  ASSERT_EQ(rows.size(), 200u);
  int right = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].at("image"), files[i]);
    EXPECT_EQ(rows[i].at("class").get<int>(), expected[i]) << files[i];
    EXPECT_NEAR(rows[i].at("confidence").get<double>(), expected_confidence[i], 1e-4) << files[i];
    right += rows[i].at("class").get<int>() == truth[i];
  }
  // One epoch on 12,000 images reaches 77 % on the test split (measured);
  // an untrained model labels 10 % right.
  EXPECT_GE(right, 140) << "of 200 real images labelled right";
  // The table names classes by their labels.
  const auto table = run_orchestrate("predict " + model_dir().string() + " " + files[1]);
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("confidence"), std::string::npos) << table.output;
  EXPECT_EQ(std::count(table.output.begin(), table.output.end(), '\n'), 2 + 3) << table.output;
}

// Weights without their recipe (a .safetensors file, as imported from
// torchvision) export with the recipe that builds their model, as `eval`
// takes them; the export predicts what the run's own export does. The weights
// are named with --checkpoint, as eval and export take them.
TEST_F(ServingCli, ABareSafetensorsFileExportsWithTheRecipeThatBuildsItsModel) {
  const std::string weights = dir_->file("bare.safetensors");
  const auto exported = run_orchestrate("weights export --checkpoint 1 " + weights + " --db " + db());
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const auto listed = run_orchestrate("weights list --checkpoint " + weights + " --format json");
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  for (const auto& tensor : nlohmann::json::parse(listed.output)) {  // shapes as arrays of integers
    std::int64_t elements = 1;
    for (const auto& size : tensor.at("shape")) elements *= size.get<std::int64_t>();
    EXPECT_EQ(elements, tensor.at("elements").get<std::int64_t>()) << listed.output;
  }

  const auto refused = run_orchestrate("export serving " + weights + " -o " + dir_->file("bare_repo"));
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("give the recipe that builds it: orchestrate export serving RECIPE --checkpoint " +
                                weights),
            std::string::npos)
      << refused.output;
  EXPECT_FALSE(fs::exists(dir_->file("bare_repo")));

  const std::string recipe = std::string(orchestrate::build_paths::kSourceDir) + "/recipes/fashion_mnist_fast.toml";
  const auto bare = run_orchestrate("export serving " + recipe + " --checkpoint " + weights + " -o " +
                                    dir_->file("bare_repo") + " --name bare --top-k 3");
  ASSERT_EQ(bare.exit_code, 0) << bare.output;
  const auto provenance = nlohmann::json::parse(read_text(fs::path(dir_->file("bare_repo")) / "bare" / "1" / "export.json"));
  EXPECT_EQ(provenance.at("weights"), fs::absolute(weights).lexically_normal().string());
  EXPECT_EQ(provenance.at("model"), "convnet");

  const std::string image = dir_->file("bare_probe.png");
  run_python("from PIL import Image\nImage.frombytes('L', (28, 28), bytes((i * 7) % 256 for i in range(784))).save('" +
             image + "')\n");
  const auto from_run = run_orchestrate("predict " + (model_dir() / "1").string() + " " + image + " --format json");
  const auto from_file = run_orchestrate("predict " + dir_->file("bare_repo") + "/bare " + image + " --format json");
  ASSERT_EQ(from_run.exit_code, 0) << from_run.output;
  ASSERT_EQ(from_file.exit_code, 0) << from_file.output;
  const auto run_rows = nlohmann::json::parse(from_run.output), file_rows = nlohmann::json::parse(from_file.output);
  ASSERT_EQ(run_rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(file_rows.at(i).at("class"), run_rows.at(i).at("class"));
    EXPECT_EQ(file_rows.at(i).at("confidence"), run_rows.at(i).at("confidence"));
  }
}

// export onnx: the same model as an ONNX file that onnxruntime runs to the
// TorchScript's outputs, self-describing (labels and preprocessing in its
// metadata); converted out of the box, with no $ORCHESTRATE_PYTHON, by the
// environment scripts/setup made (python3 on PATH has no torch).
TEST_F(ServingCli, ExportOnnxRunsInOnnxruntimeAsTheTorchScriptDoes) {
  unsetenv("ORCHESTRATE_PYTHON");
  const std::string onnx = dir_->file("onnx/fashion.onnx");
  const auto exported = run_orchestrate("export onnx 1 --db " + db() + " -o " + onnx + " --top-k 3");
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_NE(exported.output.find("checked with onnxruntime"), std::string::npos) << exported.output;
  EXPECT_NE(exported.output.find("converted by " + std::string(ORCHESTRATE_PYTHON) +
                                 " (the environment scripts/setup made)"),
            std::string::npos)
      << exported.output;
  const std::string checked = run_python(R"PY(
import json, numpy as np, onnx, onnxruntime, torch
model = onnx.load(")PY" + onnx + R"PY(")
meta = {p.key: p.value for p in model.metadata_props}
labels = json.loads(meta["orchestrate.labels"])
assert labels == open(")PY" + (model_dir() / "labels.txt").string() + R"PY(").read().splitlines()[:10], labels
assert json.loads(meta["orchestrate.preprocessing"])["height"] == 28, meta
session = onnxruntime.InferenceSession(")PY" + onnx + R"PY(", providers=["CPUExecutionProvider"])
assert [i.name for i in session.get_inputs()] == ["images"]
assert [o.name for o in session.get_outputs()] == ["logits", "topk_indices", "topk_confidences"]
scripted = torch.jit.load(")PY" + (model_dir() / "1" / "model.pt").string() + R"PY(").eval()
images = torch.rand(7, 1, 28, 28, generator=torch.Generator().manual_seed(3))
logits, top, confidences = session.run(None, {"images": images.numpy()})
with torch.no_grad():
    expected = scripted(images)
assert np.abs(logits - expected[0].numpy()).max() < 1e-4, np.abs(logits - expected[0].numpy()).max()
assert (top == expected[1].numpy()).all(), (top, expected[1])
assert np.abs(confidences - expected[2].numpy()).max() < 1e-5
print("ok", float(np.abs(logits - expected[0].numpy()).max()))
)PY");
  EXPECT_EQ(checked.rfind("ok ", 0), 0u) << checked;

  // $ORCHESTRATE_PYTHON wins; one without torch (no site-packages at all) is
  // one line naming what to install.
  const std::string bare_python = dir_->write("bare_python", "#!/bin/sh\nexec python3 -S \"$@\"\n");
  fs::permissions(bare_python, fs::perms::owner_exec, fs::perm_options::add);
  setenv("ORCHESTRATE_PYTHON", bare_python.c_str(), 1);
  const auto no_torch = run_orchestrate("export onnx 1 --db " + db() + " -o " + dir_->file("onnx/other.onnx"));
  unsetenv("ORCHESTRATE_PYTHON");
  EXPECT_EQ(no_torch.exit_code, 1) << no_torch.output;
  EXPECT_NE(no_torch.output.find("pip install onnx==1.23.2 onnxruntime==1.32.0"), std::string::npos) << no_torch.output;
  EXPECT_FALSE(fs::exists(dir_->file("onnx/other.onnx")));
}

TEST_F(ServingCli, BadInputGetsOneLineAndTheExitCode) {
  const std::string corrupt = dir_->write("broken.jpg", std::string("\xFF\xD8\xFF\xE0 truncated", 14));
  const auto bad_image = run_orchestrate("predict " + model_dir().string() + " " + corrupt);
  EXPECT_EQ(bad_image.exit_code, 1) << bad_image.output;
  EXPECT_NE(bad_image.output.find("orchestrate: error: " + corrupt + ": "), std::string::npos) << bad_image.output;
  const auto missing = run_orchestrate("predict " + model_dir().string() + " " + dir_->file("missing.png"));
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("missing.png: no such image file"), std::string::npos) << missing.output;
  const auto no_model = run_orchestrate("predict " + dir_->path().string() + " " + corrupt);
  EXPECT_EQ(no_model.exit_code, 2) << no_model.output;
  EXPECT_NE(no_model.output.find("holds no exported model"), std::string::npos) << no_model.output;
  const auto no_out = run_orchestrate("export serving 1 --db " + db());
  EXPECT_EQ(no_out.exit_code, 2) << no_out.output;
  EXPECT_NE(no_out.output.find("-o DIR (--output DIR)"), std::string::npos) << no_out.output;
  const auto unknown = run_orchestrate("export keras 1 --db " + db());
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("unknown target 'keras' (known: serving, onnx, tensorboard, mlflow)"), std::string::npos)
      << unknown.output;
}

}  // namespace
}  // namespace orchestrate::testing
