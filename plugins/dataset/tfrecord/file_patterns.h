// The files a split reads, from paths and glob patterns.
#pragma once

#include <string>
#include <vector>

namespace orchestrate::tfrecord {

// Each pattern is a path or a glob(7) pattern (train-*-of-01024); a relative
// one is taken under `dir` when `dir` is set. Matches are sorted within each
// pattern, kept in pattern order, listed once, and directories are left out.
// A pattern that matches no file throws DataError naming it, so a typo never
// trains on less data than meant.
std::vector<std::string> expand_file_patterns(const std::vector<std::string>& patterns, const std::string& dir);

}  // namespace orchestrate::tfrecord
