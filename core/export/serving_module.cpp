#include "export/serving_module.h"

#include <ATen/ops/allclose.h>
#include <ATen/ops/rand.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/frontend/tracer.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>

#include "orchestrate/error.h"

namespace orchestrate {

namespace {

// "orchestrate::(anonymous namespace)::ResNetV1" -> "ResNetV1": a TorchScript
// class name (the exported code names each submodule's class by it).
std::string script_class_name(const torch::nn::Module& module) {
  std::string name = module.name();
  if (const auto colon = name.rfind("::"); colon != std::string::npos) name = name.substr(colon + 2);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) ? "Module" + name : name;
}

// The C++ module tree as script modules holding the very same tensors (same
// TensorImpl). The tracer then maps every parameter and buffer it meets to a
// read of self.<path> instead of baking it in as a constant, so the exported
// module has the model's state_dict names.
torch::jit::Module mirror(const torch::nn::Module& module, const std::shared_ptr<torch::jit::CompilationUnit>& unit) {
  torch::jit::Module out(c10::QualifiedName("__torch__.orchestrate." + script_class_name(module)), unit,
                         /*shouldMangle=*/true);
  // Python's ScriptModule and jit::Module::eval() both expect the attribute.
  out.register_attribute("training", c10::BoolType::get(), false);
  for (const auto& p : module.named_parameters(/*recurse=*/false))
    if (p.value().defined()) out.register_parameter(p.key(), p.value(), /*is_buffer=*/false);
  for (const auto& b : module.named_buffers(/*recurse=*/false))
    if (b.value().defined()) out.register_buffer(b.key(), b.value());
  for (const auto& child : module.named_children()) out.register_module(child.key(), mirror(*child.value(), unit));
  return out;
}

}  // namespace

torch::jit::Module trace_serving_module(Model& model, std::int64_t channels, std::int64_t height, std::int64_t width,
                                        std::int64_t top_k) {
  if (top_k < 1) throw RecipeError("top_k = " + std::to_string(top_k) + " must be at least 1");
  model.to(at::kCPU);
  model.eval();
  at::NoGradGuard no_grad;
  // NCHW, whatever layout the run trained in (channels-last by default), so
  // that the same weights export to the same module, serving the same
  // numbers, from the end of a run or from its checkpoint. Copied, not
  // contiguous(): a weight with one input channel reads as contiguous in
  // either layout and would keep the strides that make oneDNN pick NHWC.
  const auto to_nchw = [](at::Tensor& tensor) {
    tensor.set_data(at::empty_like(tensor, at::MemoryFormat::Contiguous).copy_(tensor));
  };
  for (auto& tensor : model.parameters()) to_nchw(tensor);
  for (auto& tensor : model.buffers()) to_nchw(tensor);
  auto unit = std::make_shared<torch::jit::CompilationUnit>();
  torch::jit::Module serving = mirror(model, unit);

  const auto serving_forward = [&](torch::jit::Stack inputs) -> torch::jit::Stack {
    const auto logits = model.forward(inputs.at(0).toTensor()).to(at::kFloat);
    const std::int64_t k = std::min(top_k, logits.size(1));
    auto [confidences, indices] = logits.softmax(1).topk(k, 1);
    return {c10::ivalue::Tuple::create({logits, indices, confidences})};
  };
  const auto example = at::rand({2, channels, height, width});
  std::shared_ptr<torch::jit::tracer::TracingState> state;
  try {
    state = torch::jit::tracer::trace({example}, serving_forward, [](const at::Tensor&) { return std::string(); },
                                      /*strict=*/true, /*force_outplace=*/false, &serving, {"images"})
                .first;
  } catch (const std::exception& e) {
    torch::jit::tracer::abandon();
    throw Error("cannot trace the model for serving: " + exception_reason(e));
  }
  auto* forward = unit->create_function(c10::QualifiedName(*serving.type()->name(), "forward"), state->graph);
  serving.type()->addMethod(forward);
  serving.eval();

  // check_trace: another batch size, so a batch size baked in shows up too.
  const auto check = at::rand({3, channels, height, width});
  const auto expected = model.forward(check).to(at::kFloat);
  const auto got = serving.forward({check}).toTupleRef().elements().at(0).toTensor();
  if (!got.sizes().equals(expected.sizes()) || !at::allclose(got, expected, 1e-5, 1e-5))
    throw Error("the traced model's logits differ from the model's on a batch of 3 (max difference " +
                (got.sizes().equals(expected.sizes()) ? std::to_string((got - expected).abs().max().item<double>())
                                                      : std::string("shape mismatch")) +
                "): its forward has control flow that depends on the batch, which a trace cannot keep");
  return serving;
}

}  // namespace orchestrate
