#include "checkpoint/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "orchestrate/error.h"

namespace orchestrate {

namespace fs = std::filesystem;

namespace {

std::string os_error(int code) { return std::strerror(code); }

// Closes a descriptor on every path out of a scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

}  // namespace

void write_file_durably(const std::string& path, std::string_view bytes) {
  FileDescriptor file(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (file.get() < 0) throw Error("cannot create " + path + ": " + os_error(errno));
  const char* data = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t written = ::write(file.get(), data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      throw Error("cannot write " + path + ": " + os_error(errno) + " (is the disk full?)");
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  if (::fsync(file.get()) != 0) throw Error("cannot flush " + path + " to disk: " + os_error(errno));
  if (::close(file.release()) != 0) throw Error("cannot close " + path + ": " + os_error(errno));
}

void sync_directory(const std::string& path) {
  FileDescriptor directory(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (directory.get() < 0) throw Error("cannot open directory " + path + ": " + os_error(errno));
  if (::fsync(directory.get()) != 0) throw Error("cannot flush directory " + path + " to disk: " + os_error(errno));
}

void publish_directory(const std::string& staged, const std::string& final_path) {
  const fs::path parent = fs::path(final_path).parent_path();
  sync_directory(staged);
  std::error_code ignored;
  if (fs::exists(final_path)) {
    // rename(2) cannot replace a non-empty directory: move the old one aside
    // first. A crash in between leaves the old copy under the aside name and
    // the new one staged, both complete; neither is half written.
    const std::string aside = final_path + ".replaced";
    fs::remove_all(aside, ignored);
    if (::rename(final_path.c_str(), aside.c_str()) != 0)
      throw Error("cannot replace " + final_path + ": " + os_error(errno));
    if (::rename(staged.c_str(), final_path.c_str()) != 0)
      throw Error("cannot publish " + final_path + ": " + os_error(errno));
    sync_directory(parent.string());
    fs::remove_all(aside, ignored);
    return;
  }
  if (::rename(staged.c_str(), final_path.c_str()) != 0)
    throw Error("cannot publish " + final_path + ": " + os_error(errno));
  sync_directory(parent.string());
}

void require_writable_directory(const std::string& directory, const std::string& what) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error)
    throw Error(what + " " + directory + " cannot be created: " + error.message() +
                "; choose another directory or fix its permissions");
  const std::string probe = (fs::path(directory) / (".write-test-" + std::to_string(::getpid()))).string();
  FileDescriptor file(::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (file.get() < 0)
    throw Error(what + " " + directory + " is not writable: " + os_error(errno) +
                "; choose another directory or fix its permissions");
  ::unlink(probe.c_str());
}

}  // namespace orchestrate
