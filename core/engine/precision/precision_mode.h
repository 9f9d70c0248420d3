// The recipe's [precision] mode, apart from autocast itself, so that the
// typed settings name it without LibTorch's headers.
#pragma once

#include <string>

namespace orchestrate {

// fp32: autocast untouched. bf16, fp16: autocast to that dtype.
enum class PrecisionMode { fp32, bf16, fp16 };

// "fp32" | "bf16" | "fp16"; anything else is an Error listing those.
PrecisionMode parse_precision_mode(const std::string& name);
const char* precision_mode_name(PrecisionMode mode);

}  // namespace orchestrate
