#include "distributed/prefixed_lines.h"

namespace orchestrate {

void PrefixedLines::write(std::string_view bytes) {
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    if (newline == std::string_view::npos) {
      pending_.append(bytes);
      while (pending_.size() >= kMaxLine) {
        write_line(std::string_view(pending_).substr(0, kMaxLine));
        pending_.erase(0, kMaxLine);
      }
      break;
    }
    if (pending_.empty()) {
      write_line(bytes.substr(0, newline));
    } else {
      pending_.append(bytes.substr(0, newline));
      write_line(pending_);
      pending_.clear();
    }
    bytes.remove_prefix(newline + 1);
  }
  out_.flush();
}

void PrefixedLines::finish() {
  if (!pending_.empty()) write_line(pending_);
  pending_.clear();
  out_.flush();
}

void PrefixedLines::write_line(std::string_view line) {
  // One insertion per line: nothing else writes to out_ in between.
  std::string text;
  text.reserve(prefix_.size() + line.size() + 1);
  text.append(prefix_).append(line).push_back('\n');
  out_ << text;
}

}  // namespace orchestrate
