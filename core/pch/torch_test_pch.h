// The tests' precompiled header for tests that use LibTorch: the library's
// LibTorch headers and the tests' own (core/pch/CMakeLists.txt).
#include "torch_pch.h"
#include "test_pch.h"
