// Helpers the safetensors tests share: comparing tensors byte for byte (the
// only comparison every dtype supports, float8 and uint16 included) and
// running Python's safetensors as the reference.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "checkpoint/safetensors.h"
#include "checkpoint/safetensors_header.h"
#include "orchestrate/testing/python_reference.h"

namespace orchestrate::testing {

// The tensor's bytes as the format stores them, in hex.
inline std::string bytes_hex(const at::Tensor& tensor) {
  const at::Tensor dense = tensor.cpu().contiguous();
  const auto* bytes = static_cast<const unsigned char*>(dense.const_data_ptr());
  std::string hex;
  char digits[3];
  for (std::int64_t i = 0; i < dense.numel() * dense.element_size(); ++i) {
    std::snprintf(digits, sizeof digits, "%02x", bytes[i]);
    hex += digits;
  }
  return hex;
}

inline void expect_same_tensor(const at::Tensor& actual, const at::Tensor& expected, const std::string& name) {
  EXPECT_EQ(actual.scalar_type(), expected.scalar_type()) << name;
  ASSERT_EQ(actual.sizes(), expected.sizes()) << name;
  const at::Tensor a = actual.cpu().contiguous(), b = expected.cpu().contiguous();
  const auto bytes = static_cast<std::size_t>(a.numel() * a.element_size());
  EXPECT_TRUE(bytes == 0 || std::memcmp(a.const_data_ptr(), b.const_data_ptr(), bytes) == 0) << name << " differs";
}

// Python defining describe(tensors): {name: {dtype, shape, hex}}
// with dtype the format's name, to compare with a file read here.
inline const char* kPythonDescribe = R"(
def describe(tensors):
    names = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
             torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
             torch.uint64: "U64", torch.uint32: "U32", torch.uint16: "U16", torch.uint8: "U8",
             torch.bool: "BOOL", torch.complex64: "C64",
             torch.float8_e4m3fn: "F8_E4M3", torch.float8_e5m2: "F8_E5M2"}
    return {name: {"dtype": names[t.dtype], "shape": list(t.shape),
                   "hex": bytes(t.contiguous().reshape(-1).view(torch.uint8).tolist()).hex()}
            for name, t in tensors.items()}
)";

// Checks `tensors` against describe()'s output for the same names.
inline void expect_matches_description(const NamedTensors& content, const nlohmann::json& described) {
  EXPECT_EQ(content.tensors.size(), described.size());
  for (const auto& [name, tensor] : content.tensors) {
    ASSERT_TRUE(described.contains(name)) << name << " is not in the reference's output";
    const auto& d = described.at(name);
    EXPECT_EQ(safetensors_format::dtype_name(tensor.scalar_type()).value_or("?"), d.at("dtype").get<std::string>())
        << name;
    EXPECT_EQ(tensor.sizes().vec(), d.at("shape").get<std::vector<std::int64_t>>()) << name;
    EXPECT_EQ(bytes_hex(tensor), d.at("hex").get<std::string>()) << name;
  }
}

// run_python, with the install hint for the safetensors package: a missing
// package fails the test, it never skips it.
inline nlohmann::json run_safetensors_reference(const std::string& script) {
  try {
    return nlohmann::json::parse(run_python("import json, safetensors, torch\n" + std::string(kPythonDescribe) + script));
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) +
                             "\nThese tests need the Python package safetensors in the project's venv: "
                             "run scripts/setup, which installs it (or: <venv>/bin/pip install safetensors)");
  }
}

// A Python string literal of `path` (the scratch paths hold no quotes).
inline std::string python_string(const std::string& path) { return "r'" + path + "'"; }

}  // namespace orchestrate::testing
