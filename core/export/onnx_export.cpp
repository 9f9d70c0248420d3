#include "export/onnx_export.h"

#include <torch/version.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "export/serving_module.h"
#include "orchestrate/error.h"
#include "orchestrate/run_program.h"
#include "orchestrate/temporary_directory.h"

namespace orchestrate {
namespace {

namespace fs = std::filesystem;

// Run by the Python with torch: TorchScript -> ONNX (torch.onnx's TorchScript
// exporter: the module is already traced), metadata added, checked by
// onnx.checker and by onnxruntime against the TorchScript on a batch of
// another size. Exit 3: a package is missing; 4: the check failed; 5:
// torch.onnx cannot export the model (an operator it has no ONNX form for).
const char* const kConverter = R"PY(
import json, sys, warnings
model_pt, meta_path, out, opset = sys.argv[1:5]
try:
    import torch, onnx, onnxruntime
except ImportError as error:
    print(f"{error.name} is missing in {sys.executable}: pip install onnx==1.23.2 onnxruntime==1.32.0 "
          f"(into a Python with torch {{torch_version}}), or point $ORCHESTRATE_PYTHON at one that has them")
    sys.exit(3)
meta = json.load(open(meta_path))
module = torch.jit.load(model_pt).eval()
# LibTorch's C++ API lets a model pool with one-element lists (max_pool2d(x,
# {2}) means 2 x 2), and the trace keeps them; ONNX's MaxPool and AveragePool
# need one value per spatial axis, and torch.onnx copies the list as it is. So
# each such list is made a pair, in the graph, before the export.
graph = module.forward.graph
torch._C._jit_pass_inline(graph)
for kind in ("aten::max_pool2d", "aten::avg_pool2d", "aten::max_pool2d_with_indices"):
    for node in graph.findAllNodes(kind):
        for index, value in list(enumerate(node.inputs()))[1:5]:
            producer = value.node()
            if producer.kind() == "prim::Constant" and isinstance(value.toIValue(), list) and len(value.toIValue()) == 1:
                with graph.insert_point_guard(node):
                    pair = graph.insertConstant(value.toIValue() * 2)
                node.replaceInput(index, pair)
            elif producer.kind() == "prim::ListConstruct" and len(list(producer.inputs())) == 1:
                only = list(producer.inputs())[0]
                pair = graph.create("prim::ListConstruct", [only, only])
                pair.output().setType(value.type())
                pair.insertBefore(node)
                node.replaceInput(index, pair.output())
shape = (meta["channels"], meta["height"], meta["width"])
names = ["images"] + meta["outputs"]
warnings.simplefilter("ignore")  # torch.onnx's notice that dynamo is the newer exporter
try:
    torch.onnx.export(module, (torch.rand(2, *shape),), out, dynamo=False, opset_version=int(opset),
                      input_names=["images"], output_names=meta["outputs"],
                      dynamic_axes={name: {0: "batch"} for name in names})
except Exception as error:  # one line: torch.onnx's reason, not its graph dump
    reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    print(f"torch.onnx {torch.__version__} cannot export this model: {reason[:400]}")
    sys.exit(5)
model = onnx.load(out)
for key, value in meta["metadata"].items():
    entry = model.metadata_props.add()
    entry.key, entry.value = key, value
onnx.checker.check_model(model)
onnx.save(model, out)
images = torch.rand(3, *shape)
with torch.no_grad():
    expected = module(images)[0].numpy()
session = onnxruntime.InferenceSession(out, providers=["CPUExecutionProvider"])
got = session.run(["logits"], {"images": images.numpy()})[0]
difference = float(abs(got - expected).max())
if not difference <= 1e-4 * max(1.0, float(abs(expected).max())):
    print(f"onnxruntime's logits differ from the TorchScript's by up to {difference}: the export is not kept")
    sys.exit(4)
print(f"ok {difference!r} {onnxruntime.__version__} {torch.__version__}")
)PY";

std::string read_all(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const auto newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

}  // namespace

OnnxExport export_onnx(ServableModel& servable, const OnnxSettings& settings) {
  if (fs::path(settings.path).extension() != ".onnx")
    throw UsageError("export onnx: -o " + settings.path + ": give the file to write, ending in .onnx");
  const ModelInput& in = servable.input;
  torch::jit::Module module = trace_serving_module(*servable.model, in.channels, in.height, in.width, settings.top_k);
  const TemporaryDirectory scratch("export onnx");
  module.save((scratch.path() / "model.pt").string());

  nlohmann::json preprocessing = {{"channels", in.channels},
                                  {"height", in.height},
                                  {"width", in.width},
                                  {"central_fraction", servable.transform.central_fraction},
                                  {"resize_shorter", servable.transform.resize_shorter},
                                  {"mean", servable.transform.mean},
                                  {"std", servable.transform.std}};
  std::vector<std::string> labels = servable.class_names;
  if (static_cast<std::int64_t>(labels.size()) != in.num_classes) {
    labels.clear();
    for (std::int64_t i = 0; i < in.num_classes; ++i) labels.push_back(std::to_string(i));
  }
  nlohmann::json meta = {{"channels", in.channels},
                         {"height", in.height},
                         {"width", in.width},
                         {"outputs", std::vector<std::string>(std::begin(kServingOutputs), std::end(kServingOutputs))},
                         {"metadata",
                          {{"orchestrate.labels", nlohmann::json(labels).dump()},
                           {"orchestrate.preprocessing", preprocessing.dump()},
                           {"orchestrate.provenance", nlohmann::json(servable.provenance).dump()}}}};
  std::ofstream(scratch.path() / "meta.json") << meta.dump();
  std::string converter = kConverter;
  const std::string placeholder = "{{torch_version}}";
  converter.replace(converter.find(placeholder), placeholder.size(), TORCH_VERSION);
  std::ofstream(scratch.path() / "to_onnx.py") << converter;

  const fs::path target = fs::absolute(settings.path);
  std::error_code ignored;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ignored);
  const fs::path log = scratch.path() / "log.txt";
  const int status = run_program(settings.python,
                                 {(scratch.path() / "to_onnx.py").string(), (scratch.path() / "model.pt").string(),
                                  (scratch.path() / "meta.json").string(), (scratch.path() / "model.onnx").string(),
                                  std::to_string(settings.opset)},
                                 log);
  const std::string said = last_line(read_all(log));
  if (status != 0 || said.rfind("ok ", 0) != 0) {
    if (status == -1)
      throw Error("export onnx: no " + settings.python + " to convert with (set $ORCHESTRATE_PYTHON to a Python with torch " +
                  TORCH_VERSION + ", onnx and onnxruntime)");
    throw Error("export onnx: " + (said.empty() ? "the conversion failed (exit " + std::to_string(status) + ")" : said));
  }
  fs::copy_file(scratch.path() / "model.onnx", target, fs::copy_options::overwrite_existing);

  OnnxExport exported;
  exported.path = target.string();
  std::istringstream fields(said.substr(3));
  fields >> exported.max_logit_difference >> exported.onnxruntime_version >> exported.torch_version;
  return exported;
}

}  // namespace orchestrate
