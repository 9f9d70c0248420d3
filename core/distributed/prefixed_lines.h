// Turns one worker's output stream, read in arbitrary chunks, into whole lines
// prefixed with its rank ("[rank 1] loss 0.53"), so the output of several
// workers can be merged line by line without one cutting into another.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>

namespace orchestrate {

class PrefixedLines {
 public:
  // A line longer than this is written in pieces of this size, each as a line
  // of its own: a worker that never ends its line must not grow us unbounded.
  static constexpr std::size_t kMaxLine = 64 * 1024;

  PrefixedLines(std::string prefix, std::ostream& out) : prefix_(std::move(prefix)), out_(out) {}

  // Writes every line that `bytes` completes; keeps the rest for later.
  void write(std::string_view bytes);
  // Writes what is left of an unfinished last line, ended with a newline.
  void finish();

 private:
  void write_line(std::string_view line);

  std::string prefix_;
  std::ostream& out_;
  std::string pending_;
};

}  // namespace orchestrate
