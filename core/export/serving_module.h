// A trained model as a TorchScript module a server runs without orchestrate:
// images in, (logits, top-k class indices, top-k confidences) out.
#pragma once

#include <torch/csrc/jit/api/module.h>

#include <cstdint>

#include "orchestrate/model.h"

namespace orchestrate {

// The outputs the serving forward returns, in order (Triton's PyTorch backend
// names tuple outputs by position: logits__0, topk_indices__1, ...).
inline constexpr const char* kServingOutputs[] = {"logits", "topk_indices", "topk_confidences"};

// Traces `model` (in eval mode, on the CPU) with LibTorch's C++ tracer into a
// TorchScript module whose parameters and buffers keep the model's names, so
// its state_dict() matches model.safetensors. forward takes float32 images
// [N, C, H, W], preprocessed as the model was trained, for any N; it returns
// the logits [N, classes], the indices of the `top_k` most likely classes
// [N, k] (int64) and their softmax confidences [N, k] (float32), with k
// capped at the number of classes.
//
// The trace is then checked the way torch.jit.trace's check_trace does: on a
// batch of another size, the module's logits must equal forward()'s, or the
// model has shape- or data-dependent control flow that a trace cannot keep
// (an Error says so).
torch::jit::Module trace_serving_module(Model& model, std::int64_t channels, std::int64_t height, std::int64_t width,
                                        std::int64_t top_k);

}  // namespace orchestrate
