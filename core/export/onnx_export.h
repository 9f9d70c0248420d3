// `orchestrate export onnx`: a trained model as an ONNX file, for
// onnxruntime, TensorRT or any other ONNX runtime. LibTorch's C++ API has no
// ONNX exporter, so the model traced as for serving (serving_module.h) goes
// through torch.onnx in the Python that has the same torch, and the file is
// checked there with onnxruntime against the TorchScript's logits before it
// is kept.
#pragma once

#include <cstdint>
#include <string>

#include "export/serving_export.h"

namespace orchestrate {

struct OnnxSettings {
  std::string path;       // the .onnx file to write
  std::int64_t top_k = 0;  // the top-k outputs, as the serving export has them ([export] top_k)
  int opset = 17;
  // The Python with torch, onnx and onnxruntime: $ORCHESTRATE_PYTHON, else python3 on PATH.
  std::string python;
};

struct OnnxExport {
  std::string path;
  double max_logit_difference = 0;  // |onnxruntime - TorchScript| on a batch of 3 random images
  std::string onnxruntime_version, torch_version;
};

// Writes `settings.path`: input "images" [N, C, H, W] float32 (preprocessed
// as the model was trained), outputs "logits", "topk_indices" and
// "topk_confidences" (serving_module.h), N dynamic; the labels, the
// preprocessing and the provenance in the model's metadata_props
// (orchestrate.labels, orchestrate.preprocessing, orchestrate.provenance, as JSON).
OnnxExport export_onnx(ServableModel& servable, const OnnxSettings& settings);

}  // namespace orchestrate
