// The last step of an image preset on the CPU: uint8 [N, h, w, C] pixels to
// float32 [N, C, h, w] planes, x * scale[c] + bias[c] (torchvision's
// ToDtype(scale=True) then Normalize, folded into one multiply-add), in one
// pass over the batch.
//
// Written by hand because ATen has no fused op for it: the conversion with
// its permutation is one strided copy, the multiply-add another pass over the
// 4x larger float batch. Measured in bench-input on the 2-core EPYC (resnet
// preset, batch 64, 224x224): those two passes were 13 % of a pipeline
// thread's time (perf), the largest cost after the JPEG decoder.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace orchestrate {

// images: contiguous uint8 [N, h, w, C] on the CPU; out: contiguous float32
// [N, C, h, w] on the CPU; scale and bias: one value per channel, 1 or 3
// channels. Every value is float(x) * scale + bias with the rounding of
// ATen's addcmul on the converted batch on this CPU (fused multiply-add
// where ATen's kernel fuses), so its numbers bit for bit.
void normalize_into_planes(const at::Tensor& images, const std::vector<float>& scale, const std::vector<float>& bias,
                           at::Tensor& out);

}  // namespace orchestrate
