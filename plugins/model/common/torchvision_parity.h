// Parity of a model plugin with its torchvision (or timm) original. Python
// builds the reference model, writes its state_dict and a fixed batch with
// the logits it gives (eval mode, then train mode) as safetensors files; the
// C++ model must have the same parameter and buffer names and shapes, load those
// weights by name, and give the same logits and batch-norm statistics. In
// train mode the C++ side runs forward_train, so models whose torchvision
// original returns auxiliary logits in training (Inception3's
// InceptionOutputs) are compared on those too.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/safetensors.h"
#include "orchestrate/model.h"
#include "orchestrate/testing/python_reference.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate::model_testing {

// fp32 on CPU, same kernels on both sides (LibTorch is the torch wheel's).
constexpr double kLogitsTolerance = 1e-4;

struct TorchvisionReference {
  std::map<std::string, at::Tensor> state;               // the state_dict before any forward
  std::map<std::string, at::Tensor> buffers_after_train;  // after one train-mode forward
  at::Tensor images, eval_logits, train_logits;
  // The train-mode output's other fields (InceptionOutputs.aux_logits), by torchvision's field name.
  std::map<std::string, at::Tensor> train_aux_logits;
  std::int64_t parameter_count = 0;
};

struct ParityOptions {
  // torchvision's train-mode output field -> the model's ModelOutput::aux_logits
  // name, e.g. {"aux_logits", "aux"} for Inception3; empty: the model has none.
  std::map<std::string, std::string> aux_names;
  // The model was built right after torch::manual_seed(0), as the reference
  // is, and its init draws the same numbers in the same order as
  // torchvision's: its weights must equal the reference's before any copy.
  bool same_initial_state = false;
  // The Python package the constructor expression names, imported beside
  // torch: "torchvision", or "timm" for timm.create_model(...).
  std::string python_module = "torchvision";
};

inline constexpr std::string_view kTrainAuxPrefix = "train_aux.";

inline std::map<std::string, at::Tensor> read_tensors(const std::string& path) {
  std::map<std::string, at::Tensor> out;
  for (auto& [name, tensor] : read_safetensors(path).tensors) out.emplace(name, tensor);
  return out;
}

// `constructor`: a Python expression building the model, e.g.
// "torchvision.models.resnet18(num_classes=7)"; `python_module`: the package
// it names, imported first (a missing one fails with the setup hint).
inline TorchvisionReference torchvision_reference(const std::string& constructor,
                                                  const std::vector<std::int64_t>& image_shape,
                                                  const std::string& python_module = "torchvision") {
  testing::ScratchDir dir;
  std::string shape;
  for (const auto side : image_shape) shape += std::to_string(side) + ",";
  const std::string script =
      "import torch, " + python_module + "\n"
      "from safetensors.torch import save_file\n"
      "torch.manual_seed(0)\n"
      "model = " + constructor + "\n"
      "images = torch.randn(" + shape + " generator=torch.Generator().manual_seed(1))\n"
      "save_file(model.state_dict(), '" + dir.file("before.safetensors") + "')\n"
      "with torch.no_grad():\n"
      "    eval_logits = model.eval()(images)\n"
      "    train_output = model.train()(images)\n"
      // A namedtuple (InceptionOutputs) when the model has auxiliary classifiers.
      "fields = train_output._asdict() if isinstance(train_output, tuple) else {'logits': train_output}\n"
      "batch = {'images': images, 'eval_logits': eval_logits, 'train_logits': fields.pop('logits')}\n"
      "batch.update({'" + std::string(kTrainAuxPrefix) + "' + k: v for k, v in fields.items() if v is not None})\n"
      "buffers = dict(model.named_buffers())\n"  // the parameters did not move; keep the files small
      "save_file(buffers, '" + dir.file("after_train.safetensors") + "')\n"
      "save_file(batch, '" + dir.file("batch.safetensors") + "')\n"
      "print(sum(p.numel() for p in model.parameters()))\n";
  TorchvisionReference reference;
  reference.parameter_count = std::stoll(testing::run_python(script));
  reference.state = read_tensors(dir.file("before.safetensors"));
  reference.buffers_after_train = read_tensors(dir.file("after_train.safetensors"));
  auto batch = read_tensors(dir.file("batch.safetensors"));
  reference.images = batch.at("images");
  reference.eval_logits = batch.at("eval_logits");
  reference.train_logits = batch.at("train_logits");
  for (const auto& [name, tensor] : batch)
    if (name.rfind(kTrainAuxPrefix, 0) == 0)
      reference.train_aux_logits.emplace(name.substr(kTrainAuxPrefix.size()), tensor);
  return reference;
}

// Parameters and buffers, as a state_dict lists them.
inline std::map<std::string, at::Tensor> state_of(Model& model) {
  std::map<std::string, at::Tensor> out;
  for (const auto& item : model.named_parameters()) out.emplace(item.key(), item.value());
  for (const auto& item : model.named_buffers()) out.emplace(item.key(), item.value());
  return out;
}

inline std::map<std::string, std::vector<std::int64_t>> shapes_of(const std::map<std::string, at::Tensor>& state) {
  std::map<std::string, std::vector<std::int64_t>> out;
  for (const auto& [name, tensor] : state) out.emplace(name, tensor.sizes().vec());
  return out;
}

inline std::int64_t parameter_count(Model& model) {
  std::int64_t count = 0;
  for (const auto& parameter : model.parameters()) count += parameter.numel();
  return count;
}

inline double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

// The largest difference between the model's buffers (batch-norm statistics)
// and the reference's, relative to the reference's largest value in that tensor.
inline double max_relative_buffer_diff(Model& model, const std::map<std::string, at::Tensor>& reference) {
  double worst = 0.0;
  for (const auto& item : model.named_buffers()) {
    const auto& name = item.key();
    const auto& tensor = item.value();
    const auto& expected = reference.at(name);
    if (!expected.is_floating_point()) {
      EXPECT_TRUE(tensor.equal(expected)) << name;
      continue;
    }
    const double scale = std::max(1.0, expected.abs().max().item<double>());
    worst = std::max(worst, max_abs_diff(tensor, expected) / scale);
  }
  return worst;
}

// Runs the whole comparison for `model` (built by the plugin for the
// reference's input shape and class count) against `constructor`.
inline void expect_torchvision_parity(Model& model, const std::string& constructor,
                                      const std::vector<std::int64_t>& image_shape,
                                      const ParityOptions& options = {}) {
  const auto reference = torchvision_reference(constructor, image_shape, options.python_module);
  auto state = state_of(model);
  ASSERT_EQ(shapes_of(state), shapes_of(reference.state)) << "names or shapes differ from " << constructor;
  EXPECT_EQ(parameter_count(model), reference.parameter_count);
  if (options.same_initial_state) {
    double init_diff = 0.0;
    for (const auto& [name, tensor] : state)
      init_diff = std::max(init_diff, max_abs_diff(tensor, reference.state.at(name)));
    std::cout << "[ parity ] " << constructor << ": max |initial weight diff| for seed 0: " << init_diff << "\n";
    EXPECT_EQ(init_diff, 0.0) << "the initialization does not draw what torchvision's draws";
  }
  {
    at::NoGradGuard no_grad;
    for (auto& [name, tensor] : state) {
      ASSERT_EQ(tensor.scalar_type(), reference.state.at(name).scalar_type()) << name;
      tensor.copy_(reference.state.at(name));
    }
  }

  at::NoGradGuard no_grad;
  model.eval();
  const double eval_diff = max_abs_diff(model.forward(reference.images), reference.eval_logits);
  model.train();
  const auto train_output = model.forward_train(reference.images);
  const double train_diff = max_abs_diff(train_output.logits, reference.train_logits);
  const double statistics_diff = max_relative_buffer_diff(model, reference.buffers_after_train);
  std::map<std::string, double> aux_diffs;  // by the model's aux name
  for (const auto& [field, expected] : reference.train_aux_logits) {
    const auto name = options.aux_names.find(field);
    ASSERT_NE(name, options.aux_names.end())
        << constructor << " returns " << field << " in train mode; map it in ParityOptions::aux_names";
    const auto found = train_output.aux_logits.find(name->second);
    ASSERT_NE(found, train_output.aux_logits.end())
        << "forward_train returned no aux logits \"" << name->second << "\"";
    aux_diffs[name->second] = max_abs_diff(found->second, expected);
  }
  EXPECT_EQ(train_output.aux_logits.size(), reference.train_aux_logits.size())
      << "forward_train returns aux logits that torchvision's train-mode forward does not";
  std::cout << "[ parity ] " << constructor << ": " << reference.parameter_count
            << " parameters; max |logits diff| eval " << eval_diff << ", train " << train_diff
            << "; max relative diff of batch-norm statistics after the train-mode forward " << statistics_diff
            << " (logit scale: eval " << reference.eval_logits.abs().max().item<double>() << ", train "
            << reference.train_logits.abs().max().item<double>() << ")\n";
  for (const auto& [name, diff] : aux_diffs)
    std::cout << "[ parity ] " << constructor << ": max |train-mode aux logits \"" << name << "\" diff| " << diff
              << "\n";
  EXPECT_LE(eval_diff, kLogitsTolerance);
  EXPECT_LE(train_diff, kLogitsTolerance);
  for (const auto& [name, diff] : aux_diffs) EXPECT_LE(diff, kLogitsTolerance) << name;
  EXPECT_LE(statistics_diff, 1e-5);
}

}  // namespace orchestrate::model_testing
