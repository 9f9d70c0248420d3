// Facts about where and with what a run happens, for its run-store row.
#pragma once

#include <string>

namespace orchestrate {

std::string host_name();
// The git commit of the directory holding `path` ("" if it is not in a git
// work tree), with "-dirty" appended when that directory has uncommitted changes.
std::string git_revision_of(const std::string& path);
// Lower-case hex SHA-256 of a file's bytes ("" if it cannot be read), so a run
// records exactly which plugin binary produced it.
std::string sha256_of_file(const std::string& path);

}  // namespace orchestrate
