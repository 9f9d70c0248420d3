// The durable note a crashing process leaves beside its run store, so that
// the run is recorded as failed with the crash's cause instead of "lost"
// with no reason. The fatal-signal handler writes it (it cannot use SQLite);
// the store turns it into the run's status and error the next time it is
// opened for writing, and shows it to readers until then (run_store.h).
//
// One file per crashed process: <store path>-crash-run<RUN>-rank<RANK>, text:
//   orchestrate-crash 1
//   run 7
//   rank 0
//   pid 4242
//   signal 11
//   message orchestrate: crashed with SIGSEGV ... at step 3
// At most limits::kMaxCrashBreadcrumbBytes; the message is one line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orchestrate {

struct CrashBreadcrumb {
  std::int64_t run_id = 0;
  int rank = 0;
  std::int64_t pid = 0;
  int signal = 0;
  std::string message;
};

// Where the process of `rank` working on run `run_id` of the store leaves it.
std::string crash_breadcrumb_path(const std::string& store_path, std::int64_t run_id, int rank);

// The file's text for `crumb`, built without allocating (the signal handler
// calls it): written into `buffer`, returns the length used. The message is
// cut at its first line end and at the size limit.
std::size_t format_crash_breadcrumb(const CrashBreadcrumb& crumb, const char* message, char* buffer,
                                    std::size_t capacity) noexcept;

// Parses a breadcrumb's bytes: the crumb, or nullopt with `problem` saying
// what is wrong (any bytes at all are safe to give it). Control characters
// in the message become '?'.
std::optional<CrashBreadcrumb> parse_crash_breadcrumb(std::string_view bytes, std::string* problem = nullptr);

// A breadcrumb file found beside a store, parsed, or with the reason it
// could not be (a damaged or foreign file of that name).
struct FoundCrashBreadcrumb {
  std::string path;
  std::optional<CrashBreadcrumb> crumb;
  std::string problem;
};

// Every breadcrumb file of the store at `store_path`, by path.
std::vector<FoundCrashBreadcrumb> find_crash_breadcrumbs(const std::string& store_path);

// The crash of run `run_id`, any rank (the lowest first), if one parses.
std::optional<CrashBreadcrumb> crash_of_run(const std::string& store_path, std::int64_t run_id);

// Removes every breadcrumb file of run `run_id` (a resumed run starts clean).
void remove_crash_breadcrumbs(const std::string& store_path, std::int64_t run_id);

// The one of run `run_id` and `rank`, if there is one and it parses.
std::optional<CrashBreadcrumb> read_crash_breadcrumb(const std::string& store_path, std::int64_t run_id, int rank);

}  // namespace orchestrate
