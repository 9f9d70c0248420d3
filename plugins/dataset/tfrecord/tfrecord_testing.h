// Helpers the tfrecord tests share: whole-file bytes, damage, and PNG
// images to put in records (test_images.h).
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "orchestrate/testing/test_images.h"
#include "orchestrate/tfrecord/byte_file_testing.h"

namespace orchestrate::tfrecord::testing {

using orchestrate::testing::encode_png;
using orchestrate::testing::test_image;

}  // namespace orchestrate::tfrecord::testing
