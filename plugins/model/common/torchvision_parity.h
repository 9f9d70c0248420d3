// Parity of a model plugin with its torchvision original. Python builds the
// torchvision model, writes its state_dict and a fixed batch with the logits
// it gives (eval mode, then train mode) as safetensors files; the C++ model
// must have the same parameter and buffer names and shapes, load those
// weights by name, and give the same logits and batch-norm statistics.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "orchestrate/model.h"
#include "python_reference.h"
#include "safetensors.h"
#include "scratch_dir.h"

namespace orchestrate::model_testing {

// fp32 on CPU, same kernels on both sides (LibTorch is the torch wheel's).
constexpr double kLogitsTolerance = 1e-4;

struct TorchvisionReference {
  std::map<std::string, at::Tensor> state;               // the state_dict before any forward
  std::map<std::string, at::Tensor> buffers_after_train;  // after one train-mode forward
  at::Tensor images, eval_logits, train_logits;
  std::int64_t parameter_count = 0;
};

inline std::map<std::string, at::Tensor> read_tensors(const std::string& path) {
  std::map<std::string, at::Tensor> out;
  for (auto& [name, tensor] : read_safetensors(path).tensors) out.emplace(name, tensor);
  return out;
}

// `constructor`: a Python expression building the model, e.g.
// "torchvision.models.resnet18(num_classes=7)".
inline TorchvisionReference torchvision_reference(const std::string& constructor,
                                                  const std::vector<std::int64_t>& image_shape) {
  testing::ScratchDir dir;
  std::string shape;
  for (const auto side : image_shape) shape += std::to_string(side) + ",";
  const std::string script =
      "import torch, torchvision\n"
      "from safetensors.torch import save_file\n"
      "torch.manual_seed(0)\n"
      "model = " + constructor + "\n"
      "images = torch.randn(" + shape + " generator=torch.Generator().manual_seed(1))\n"
      "save_file(model.state_dict(), '" + dir.file("before.safetensors") + "')\n"
      "with torch.no_grad():\n"
      "    eval_logits = model.eval()(images)\n"
      "    train_logits = model.train()(images)\n"
      "buffers = dict(model.named_buffers())\n"  // the parameters did not move; keep the files small
      "save_file(buffers, '" + dir.file("after_train.safetensors") + "')\n"
      "save_file({'images': images, 'eval_logits': eval_logits, 'train_logits': train_logits}, '" +
      dir.file("batch.safetensors") + "')\n"
      "print(sum(p.numel() for p in model.parameters()))\n";
  TorchvisionReference reference;
  reference.parameter_count = std::stoll(testing::run_python(script));
  reference.state = read_tensors(dir.file("before.safetensors"));
  reference.buffers_after_train = read_tensors(dir.file("after_train.safetensors"));
  auto batch = read_tensors(dir.file("batch.safetensors"));
  reference.images = batch.at("images");
  reference.eval_logits = batch.at("eval_logits");
  reference.train_logits = batch.at("train_logits");
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
                                      const std::vector<std::int64_t>& image_shape) {
  const auto reference = torchvision_reference(constructor, image_shape);
  auto state = state_of(model);
  ASSERT_EQ(shapes_of(state), shapes_of(reference.state)) << "names or shapes differ from " << constructor;
  EXPECT_EQ(parameter_count(model), reference.parameter_count);
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
  const double train_diff = max_abs_diff(model.forward(reference.images), reference.train_logits);
  const double statistics_diff = max_relative_buffer_diff(model, reference.buffers_after_train);
  std::cout << "[ parity ] " << constructor << ": " << reference.parameter_count
            << " parameters; max |logits diff| eval " << eval_diff << ", train " << train_diff
            << "; max relative diff of batch-norm statistics after the train-mode forward " << statistics_diff
            << " (logit scale: eval " << reference.eval_logits.abs().max().item<double>() << ", train "
            << reference.train_logits.abs().max().item<double>() << ")\n";
  EXPECT_LE(eval_diff, kLogitsTolerance);
  EXPECT_LE(train_diff, kLogitsTolerance);
  EXPECT_LE(statistics_diff, 1e-5);
}

}  // namespace orchestrate::model_testing
