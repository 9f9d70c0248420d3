// A whole file's bytes, for the image decoder.
#pragma once

#include <string>

namespace orchestrate::image_folder {

// A file that cannot be read is a DataError naming it.
std::string read_file_bytes(const std::string& path);

}  // namespace orchestrate::image_folder
