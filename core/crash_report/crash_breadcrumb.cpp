#include "crash_report/crash_breadcrumb.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "crash_report/signal_safe_text.h"
#include "orchestrate/input_limits.h"

namespace orchestrate {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kHeader = "orchestrate-crash 1";
constexpr std::string_view kInfix = "-crash-run";

// "<key> <value>" at the front of `rest`, advancing it past the line end.
bool take_line(std::string_view& rest, std::string_view key, std::string_view& value) {
  const std::size_t end = rest.find('\n');
  if (end == std::string_view::npos) return false;
  const std::string_view line = rest.substr(0, end);
  rest.remove_prefix(end + 1);
  if (line.size() < key.size() + 1 || line.substr(0, key.size()) != key || line[key.size()] != ' ') return false;
  value = line.substr(key.size() + 1);
  return true;
}

template <class Number>
bool take_number(std::string_view& rest, std::string_view key, Number minimum, Number& out) {
  std::string_view value;
  if (!take_line(rest, key, value) || value.empty()) return false;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), out);
  return error == std::errc() && end == value.data() + value.size() && out >= minimum;
}

}  // namespace

std::string crash_breadcrumb_path(const std::string& store_path, std::int64_t run_id, int rank) {
  return store_path + std::string(kInfix) + std::to_string(run_id) + "-rank" + std::to_string(rank);
}

std::size_t format_crash_breadcrumb(const CrashBreadcrumb& crumb, const char* message, char* buffer,
                                    std::size_t capacity) noexcept {
  const std::size_t usable = capacity < limits::kMaxCrashBreadcrumbBytes ? capacity : limits::kMaxCrashBreadcrumbBytes;
  SignalSafeText text(buffer, usable);
  text.add("orchestrate-crash 1\nrun ").add(crumb.run_id).add("\nrank ").add(std::int64_t{crumb.rank});
  text.add("\npid ").add(crumb.pid).add("\nsignal ").add(std::int64_t{crumb.signal}).add("\nmessage ");
  // One line, and room kept for its end: a cut message still parses.
  for (const char* c = message; c && *c && *c != '\n' && text.size() + 2 < usable; ++c) text.add(*c);
  text.add("\n");
  return text.size();
}

std::optional<CrashBreadcrumb> parse_crash_breadcrumb(std::string_view bytes, std::string* problem) {
  const auto refuse = [&](const std::string& why) -> std::optional<CrashBreadcrumb> {
    if (problem) *problem = why;
    return std::nullopt;
  };
  if (bytes.size() > limits::kMaxCrashBreadcrumbBytes)
    return refuse("larger than " + std::to_string(limits::kMaxCrashBreadcrumbBytes) + " bytes");
  std::string_view rest = bytes;
  if (rest.substr(0, kHeader.size() + 1) != std::string(kHeader) + "\n")
    return refuse("does not start with '" + std::string(kHeader) + "'");
  rest.remove_prefix(kHeader.size() + 1);
  CrashBreadcrumb crumb;
  if (!take_number(rest, "run", std::int64_t{1}, crumb.run_id)) return refuse("no 'run N' line (N >= 1)");
  if (!take_number(rest, "rank", 0, crumb.rank)) return refuse("no 'rank N' line");
  if (!take_number(rest, "pid", std::int64_t{1}, crumb.pid)) return refuse("no 'pid N' line");
  if (!take_number(rest, "signal", 1, crumb.signal)) return refuse("no 'signal N' line");
  std::string_view message;
  if (!take_line(rest, "message", message) || message.empty()) return refuse("no 'message TEXT' line");
  if (!rest.empty()) return refuse("bytes after the message line");
  crumb.message.reserve(message.size());
  for (const char c : message)
    crumb.message += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return crumb;
}

namespace {

FoundCrashBreadcrumb read_found(const fs::path& path) {
  FoundCrashBreadcrumb found{path.string(), std::nullopt, ""};
  std::error_code error;
  const auto size = fs::file_size(path, error);
  if (error) {
    found.problem = "cannot read it (" + error.message() + ")";
    return found;
  }
  if (size > limits::kMaxCrashBreadcrumbBytes) {
    found.problem = "larger than " + std::to_string(limits::kMaxCrashBreadcrumbBytes) + " bytes";
    return found;
  }
  std::ifstream in(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  found.crumb = parse_crash_breadcrumb(bytes, &found.problem);
  return found;
}

}  // namespace

std::vector<FoundCrashBreadcrumb> find_crash_breadcrumbs(const std::string& store_path) {
  const fs::path store(store_path);
  const fs::path dir = store.parent_path().empty() ? fs::path(".") : store.parent_path();
  const std::string prefix = store.filename().string() + std::string(kInfix);
  std::vector<FoundCrashBreadcrumb> found;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !it->is_regular_file(error)) continue;
    found.push_back(read_found(store.parent_path().empty() ? fs::path(name) : it->path()));
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return found;
}

std::optional<CrashBreadcrumb> crash_of_run(const std::string& store_path, std::int64_t run_id) {
  std::optional<CrashBreadcrumb> first;
  for (auto& found : find_crash_breadcrumbs(store_path))
    if (found.crumb && found.crumb->run_id == run_id && (!first || found.crumb->rank < first->rank))
      first = std::move(found.crumb);
  return first;
}

void remove_crash_breadcrumbs(const std::string& store_path, std::int64_t run_id) {
  for (const auto& found : find_crash_breadcrumbs(store_path))
    if (found.crumb && found.crumb->run_id == run_id) {
      std::error_code ignored;
      fs::remove(found.path, ignored);
    }
}

std::optional<CrashBreadcrumb> read_crash_breadcrumb(const std::string& store_path, std::int64_t run_id, int rank) {
  const fs::path path = crash_breadcrumb_path(store_path, run_id, rank);
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return std::nullopt;
  FoundCrashBreadcrumb found = read_found(path);
  if (!found.crumb || found.crumb->run_id != run_id || found.crumb->rank != rank) return std::nullopt;
  return found.crumb;
}

}  // namespace orchestrate
