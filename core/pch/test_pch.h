// What most test files include and every one parses again otherwise:
// GoogleTest, nlohmann::json and the common standard headers. Compiled once
// for the tests that use no LibTorch (core/pch/CMakeLists.txt).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
