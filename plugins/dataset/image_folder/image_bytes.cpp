#include "image_bytes.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "orchestrate/error.h"

namespace orchestrate::image_folder {

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path + ": cannot be read (" + std::strerror(errno) + ")");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace orchestrate::image_folder
