// Geometric operations on decoded uint8 pixels [H, W, C], the building blocks
// of the preprocessing presets and of the exported preprocessing, so that a
// served model sees exactly the resampling it was evaluated with. Each one
// follows torchvision.transforms.v2 (or TensorFlow where named), whose
// definitions (sizes, offsets, rounding) the parity tests check.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace orchestrate {

// Resized to height x width with antialiased bilinear resampling on the
// uint8 pixels: ATen's kernel that torchvision's Resize(antialias=True) runs
// on uint8 images. Returns the pixels themselves when the size is already right.
// RGB pixels four bytes apart (a windowed JPEG decode, image_decode.h) are
// resized as the four-channel image they lie in, which the kernel takes as
// it is (three channels it first repacks into four and back), and come back
// the same way.
at::Tensor resize_pixels(const at::Tensor& pixels, std::int64_t height, std::int64_t width);

// Resized so that the shorter side is `size`, the longer side
// int(size * longer / shorter): torchvision's Resize(size) with one int.
at::Tensor resize_shorter_side(const at::Tensor& pixels, std::int64_t size);

// The rectangle at (top, left) of height x width; must lie inside the image.
at::Tensor crop_pixels(const at::Tensor& pixels, std::int64_t top, std::int64_t left, std::int64_t height,
                       std::int64_t width);

// The central height x width, offsets round((H - height) / 2) with Python's
// round (ties to even): torchvision's CenterCrop. Must fit in the image.
at::Tensor center_crop(const at::Tensor& pixels, std::int64_t height, std::int64_t width);

// TensorFlow's tf.image.central_crop(image, fraction): the central region of
// about `fraction` of each side (start int((H - H * fraction) / 2), size H - 2 * start).
at::Tensor central_fraction_crop(const at::Tensor& pixels, double fraction);

// Mirrored left to right.
at::Tensor flip_horizontally(const at::Tensor& pixels);

// Contiguous uint8 [H, W, C] pixels of any layout, mirrored left to right if
// asked: in one pass, where ATen's strided copy of four-byte RGB pixels
// costs several times the resize that made them.
at::Tensor packed_pixels(const at::Tensor& pixels, bool mirror = false);

}  // namespace orchestrate
