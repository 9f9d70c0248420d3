// The serving export: a traced TorchScript module that Python's torch.jit.load
// runs with the C++ model's outputs, in a Triton repository entry whose
// config.pbtxt parses with Triton's own ModelConfig message.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "export/model_repository.h"
#include "export/preprocessing_spec.h"
#include "export/serving_module.h"
#include "orchestrate/error.h"
#include "orchestrate/testing/python_reference.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate {
namespace {

using testing::ScratchDir;
namespace fs = std::filesystem;

// Conv, batch norm (with running statistics), dropout and a head: the layers
// whose eval-mode behaviour a trace must keep.
class SmallNet : public Model {
 public:
  SmallNet(std::int64_t channels, std::int64_t classes) {
    conv_ = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, 6, 3).padding(1)));
    norm_ = register_module("norm", torch::nn::BatchNorm2d(6));
    drop_ = register_module("drop", torch::nn::Dropout(0.5));
    head_ = register_module("head", torch::nn::Linear(6, classes));
  }
  at::Tensor forward(const at::Tensor& images) override {
    const auto x = norm_->forward(conv_->forward(images)).relu();
    return head_->forward(drop_->forward(at::adaptive_avg_pool2d(x, {1, 1}).flatten(1)));
  }

  torch::nn::Conv2d conv_{nullptr};
  torch::nn::BatchNorm2d norm_{nullptr};
  torch::nn::Dropout drop_{nullptr};
  torch::nn::Linear head_{nullptr};
};

// Running statistics away from their initial 0/1, so eval mode matters.
void give_running_statistics(SmallNet& net) {
  net.train();
  at::NoGradGuard no_grad;
  for (int i = 0; i < 3; ++i) net.forward(at::rand({8, 3, 10, 12}) * 3 + 1);
}

ServingExport small_export(const std::string& name, std::int64_t classes = 7) {
  ServingExport spec;
  spec.model_name = name;
  spec.signature = {3, 10, 12, classes, 5, 16};
  for (std::int64_t i = 0; i < classes; ++i) spec.labels.push_back("class " + std::to_string(i));
  spec.preprocessing.channels = 3;
  spec.preprocessing.height = 10;
  spec.preprocessing.width = 12;
  spec.provenance = {{"run_id", "4"}, {"step", "120"}};
  return spec;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ServingModule, ReturnsLogitsTopKIndicesAndConfidencesForAnyBatchSize) {
  at::manual_seed(1);
  SmallNet net(3, 7);
  give_running_statistics(net);
  auto serving = trace_serving_module(net, 3, 10, 12, 5);
  net.eval();
  at::NoGradGuard no_grad;
  for (std::int64_t batch : {1, 4, 9}) {
    const auto images = at::rand({batch, 3, 10, 12});
    const auto outputs = serving.forward({images}).toTupleRef().elements();
    ASSERT_EQ(outputs.size(), 3u);
    const auto logits = net.forward(images);
    EXPECT_TRUE(at::equal(outputs[0].toTensor(), logits)) << "batch " << batch;
    const auto [confidences, indices] = logits.softmax(1).topk(5, 1);
    EXPECT_TRUE(at::equal(outputs[1].toTensor(), indices));
    EXPECT_EQ(outputs[1].toTensor().scalar_type(), at::kLong);
    EXPECT_TRUE(at::allclose(outputs[2].toTensor(), confidences));
  }
  // The state keeps the model's names, so state_dict() matches model.safetensors.
  std::vector<std::string> names;
  for (const auto& p : serving.named_parameters()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"conv.weight", "conv.bias", "norm.weight", "norm.bias", "head.weight",
                                             "head.bias"}));
  std::vector<std::string> buffers;
  for (const auto& b : serving.named_buffers()) buffers.push_back(b.name);
  EXPECT_EQ(buffers, (std::vector<std::string>{"norm.running_mean", "norm.running_var", "norm.num_batches_tracked"}));
}

TEST(ServingModule, TopKIsCappedAtTheNumberOfClasses) {
  SmallNet net(3, 3);
  auto serving = trace_serving_module(net, 3, 10, 12, 5);
  const auto outputs = serving.forward({at::rand({2, 3, 10, 12})}).toTupleRef().elements();
  EXPECT_EQ(outputs[1].toTensor().sizes(), (at::IntArrayRef{2, 3}));
}

// A model whose forward depends on the batch in a way a trace freezes.
class BatchDependentNet : public SmallNet {
 public:
  using SmallNet::SmallNet;
  at::Tensor forward(const at::Tensor& images) override {
    const auto logits = SmallNet::forward(images);
    return images.size(0) == 2 ? logits : logits * 2;
  }
};

TEST(ServingModule, RefusesAModelWhoseTraceDoesNotHoldForOtherBatchSizes) {
  BatchDependentNet net(3, 4);
  try {
    trace_serving_module(net, 3, 10, 12, 5);
    FAIL() << "expected the trace check to fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("differ from the model's on a batch of 3"), std::string::npos) << e.what();
  }
}

TEST(ModelRepository, WritesTritonLayoutWithIncrementingVersions) {
  ScratchDir dir;
  SmallNet net(3, 7);
  auto serving = trace_serving_module(net, 3, 10, 12, 5);
  const auto first = write_model_version(dir.path().string(), small_export("fashion"), serving);
  const auto second = write_model_version(dir.path().string(), small_export("fashion"), serving);
  EXPECT_EQ(first.version, 1);
  EXPECT_EQ(second.version, 2);
  EXPECT_EQ(model_versions(first.model_dir), (std::vector<std::int64_t>{1, 2}));
  for (const char* file : {"model.pt", "preprocessing.json", "labels.txt", "export.json"})
    EXPECT_TRUE(fs::is_regular_file(fs::path(second.version_dir) / file)) << file;
  EXPECT_TRUE(fs::is_regular_file(dir.path() / "fashion" / "config.pbtxt"));
  EXPECT_EQ(read_text(dir.path() / "fashion" / "labels.txt").substr(0, 16), "class 0\nclass 1\n");
  // No staging directory is left behind.
  for (const auto& entry : fs::directory_iterator(dir.path() / "fashion"))
    EXPECT_NE(entry.path().filename().string()[0], '.') << entry.path();
  const auto spec = parse_preprocessing_spec(read_text(fs::path(second.version_dir) / "preprocessing.json"), "x");
  EXPECT_EQ(spec.height, 10);
  EXPECT_EQ(spec.width, 12);
}

TEST(ModelRepository, RefusesAnotherSignatureUnderTheSameName) {
  ScratchDir dir;
  SmallNet net(3, 7);
  auto serving = trace_serving_module(net, 3, 10, 12, 5);
  write_model_version(dir.path().string(), small_export("fashion"), serving);
  SmallNet other(3, 4);
  auto other_serving = trace_serving_module(other, 3, 10, 12, 5);
  try {
    write_model_version(dir.path().string(), small_export("fashion", 4), other_serving);
    FAIL() << "expected a refusal";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("config.pbtxt describes another model"), std::string::npos) << e.what();
  }
  EXPECT_EQ(model_versions((dir.path() / "fashion").string()), (std::vector<std::int64_t>{1}));
  EXPECT_THROW(write_model_version(dir.path().string(), small_export("../up"), serving), UsageError);
}

// Python loads model.pt with torch.jit.load and gets the C++ model's outputs;
// config.pbtxt parses as Triton's ModelConfig with the declared signature.
TEST(ModelRepository, PythonLoadsTheModelAndTritonsConfigParserAcceptsTheConfig) {
  ScratchDir dir;
  at::manual_seed(3);
  SmallNet net(3, 7);
  give_running_statistics(net);
  auto serving = trace_serving_module(net, 3, 10, 12, 5);
  const auto exported = write_model_version(dir.path().string(), small_export("fashion"), serving);
  const auto images = at::rand({5, 3, 10, 12});
  at::Tensor logits;
  {
    at::NoGradGuard no_grad;
    net.eval();
    logits = net.forward(images);
  }
  // Exchanged as raw float32 bytes: exact, and no extra format involved.
  const auto write_raw = [&](const std::string& name, const at::Tensor& t) {
    std::ofstream(dir.file(name), std::ios::binary)
        .write(static_cast<const char*>(t.contiguous().data_ptr()), static_cast<std::streamsize>(t.nbytes()));
  };
  write_raw("images.bin", images);
  write_raw("logits.bin", logits);
  const std::string out = testing::run_python(R"(
import numpy, torch
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2
d = ")" + dir.path().string() + R"("
m = torch.jit.load(")" + exported.version_dir + R"(/model.pt")
m.eval()
images = torch.from_numpy(numpy.fromfile(d + "/images.bin", dtype=numpy.float32).reshape(5, 3, 10, 12))
expected = torch.from_numpy(numpy.fromfile(d + "/logits.bin", dtype=numpy.float32).reshape(5, 7))
with torch.no_grad():
    logits, indices, confidences = m(images)
    small = m(images[:2])
print("logits_max_diff", (logits - expected).abs().max().item())
print("topk_equal", int(torch.equal(indices, expected.softmax(1).topk(5, 1).indices)))
print("conf_max_diff", (confidences - expected.softmax(1).topk(5, 1).values).abs().max().item())
print("batch2_equal", int(torch.equal(small[0], logits[:2])))
print("state", ",".join(sorted(m.state_dict().keys())))
config = text_format.Parse(open(")" + exported.model_dir + R"(/config.pbtxt").read(), model_config_pb2.ModelConfig())
print("config", config.name, config.platform, config.max_batch_size, list(config.input[0].dims),
      [o.name for o in config.output], list(config.output[1].dims), config.output[0].label_filename)
print("dynamic_batching", config.HasField("dynamic_batching"), config.dynamic_batching.max_queue_delay_microseconds)
)");
  EXPECT_NE(out.find("logits_max_diff 0.0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("topk_equal 1"), std::string::npos) << out;
  EXPECT_NE(out.find("conf_max_diff 0.0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("batch2_equal 1"), std::string::npos) << out;
  EXPECT_NE(out.find("state conv.bias,conv.weight,head.bias,head.weight,norm.bias,norm.num_batches_tracked,"
                     "norm.running_mean,norm.running_var,norm.weight"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("config fashion pytorch_libtorch 16 [3, 10, 12] ['logits__0', 'topk_indices__1', "
                     "'topk_confidences__2'] [5] labels.txt"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("dynamic_batching True 100\n"), std::string::npos) << out;
}

// The exported preprocessing equals torchvision's transforms on the same pixels:
// v2 ToDtype(scale) after Resize(antialias=True), then Normalize.
TEST(Preprocessing, MatchesTorchvisionResizeAndNormalize) {
  ScratchDir dir;
  at::manual_seed(5);
  const auto pixels = at::randint(0, 256, {37, 53, 3}, at::kByte);
  std::ofstream(dir.file("pixels.bin"), std::ios::binary)
      .write(static_cast<const char*>(pixels.data_ptr()), static_cast<std::streamsize>(pixels.nbytes()));
  PreprocessingSpec spec;
  spec.channels = 3;
  spec.height = 24;
  spec.width = 20;
  spec.mean = {0.485, 0.456, 0.406};
  spec.std = {0.229, 0.224, 0.225};
  const auto ours = apply_preprocessing(pixels, spec);
  std::ofstream(dir.file("ours.bin"), std::ios::binary)
      .write(static_cast<const char*>(ours.data_ptr()), static_cast<std::streamsize>(ours.nbytes()));
  const std::string out = testing::run_python(R"(
import numpy, torch
from torchvision.transforms import functional as F
d = ")" + dir.path().string() + R"("
pixels = torch.from_numpy(numpy.fromfile(d + "/pixels.bin", dtype=numpy.uint8).reshape(37, 53, 3)).permute(2, 0, 1)
x = F.resize(pixels.float(), [24, 20], antialias=True) / 255
x = F.normalize(x, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
ours = torch.from_numpy(numpy.fromfile(d + "/ours.bin", dtype=numpy.float32).reshape(3, 24, 20))
print("max_diff", (ours - x).abs().max().item())
)");
  const double diff = std::stod(out.substr(out.find("max_diff ") + 9));
  EXPECT_LE(diff, 1e-5) << out;
  EXPECT_EQ(ours.sizes(), (at::IntArrayRef{3, 24, 20}));
}

// The eval geometry of the resnet and inception presets, as exported:
// torchvision.transforms.v2 on the same uint8 pixels (Resize of the shorter
// side + CenterCrop; TF's central crop spelled as CenterCrop + Resize).
TEST(Preprocessing, ExportedPresetGeometryMatchesTorchvision) {
  ScratchDir dir;
  at::manual_seed(6);
  const auto pixels = at::randint(0, 256, {300, 410, 3}, at::kByte);
  std::ofstream(dir.file("pixels.bin"), std::ios::binary)
      .write(static_cast<const char*>(pixels.data_ptr()), static_cast<std::streamsize>(pixels.nbytes()));
  PreprocessingSpec resnet;
  resnet.channels = 3;
  resnet.height = resnet.width = 224;
  resnet.resize_shorter = 256;
  resnet.mean = {0.485, 0.456, 0.406};
  resnet.std = {0.229, 0.224, 0.225};
  PreprocessingSpec inception = resnet;
  inception.height = inception.width = 160;
  inception.resize_shorter = 0;
  inception.central_fraction = 0.875;
  inception.mean = inception.std = {0.5};
  for (const auto* spec : {&resnet, &inception}) {
    const auto ours = apply_preprocessing(pixels, *spec);
    std::ofstream(dir.file(spec == &resnet ? "resnet.bin" : "inception.bin"), std::ios::binary)
        .write(static_cast<const char*>(ours.data_ptr()), static_cast<std::streamsize>(ours.nbytes()));
  }
  // The spec survives preprocessing.json.
  const auto parsed = parse_preprocessing_spec(to_json_text(inception), "x");
  EXPECT_EQ(parsed.central_fraction, 0.875);
  EXPECT_EQ(parse_preprocessing_spec(to_json_text(resnet), "x").resize_shorter, 256);
  const std::string out = testing::run_python(R"(
import numpy, torch
from torchvision.transforms import v2
d = ")" + dir.path().string() + R"("
pixels = torch.from_numpy(numpy.fromfile(d + "/pixels.bin", dtype=numpy.uint8).reshape(300, 410, 3)).permute(2, 0, 1)
resnet = v2.Compose([v2.Resize(256, antialias=True), v2.CenterCrop(224), v2.ToDtype(torch.float32, scale=True),
                     v2.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])(pixels)
top, left = int((300 - 300 * 0.875) / 2), int((410 - 410 * 0.875) / 2)
inception = v2.Compose([v2.CenterCrop((300 - 2 * top, 410 - 2 * left)), v2.Resize((160, 160), antialias=True),
                        v2.ToDtype(torch.float32, scale=True), v2.Normalize([0.5] * 3, [0.5] * 3)])(pixels)
for name, ref in (("resnet", resnet), ("inception", inception)):
    ours = torch.from_numpy(numpy.fromfile(f"{d}/{name}.bin", dtype=numpy.float32).reshape(ref.shape))
    print(name, (ours - ref).abs().max().item())
)");
  std::istringstream lines(out);
  std::string name;
  double diff = 1;
  int checked = 0;
  while (lines >> name >> diff) {
    EXPECT_LE(diff, 1e-5) << name;
    ++checked;
  }
  EXPECT_EQ(checked, 2) << out;
}

}  // namespace
}  // namespace orchestrate
