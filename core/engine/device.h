// Chooses the device a run trains on.
#pragma once

#include <c10/core/Device.h>

#include <string>

namespace orchestrate {

// "auto": CUDA when a device is present, else CPU; "cuda" without a CUDA
// device is an Error saying so.
c10::Device select_device(const std::string& requested);

}  // namespace orchestrate
