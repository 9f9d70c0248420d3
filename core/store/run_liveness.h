// Tells a run that is still being trained from one whose process died
// without ending it (killed, out of memory, machine lost power). Such a run
// keeps status 'running' in the database forever, so the store reports it as
// "lost" when it reads it; nothing is written, since the reader may be wrong
// about a run on another machine and the run's own process, if alive, would
// overwrite it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace orchestrate {

// A writer beats at least once per flush interval; ten missed beats, and never
// less than a minute (a slow disk, a suspended laptop, clocks of two machines
// a little apart), mean its process is gone. One rule for every reader: a
// reader cannot know the interval another process used, so it assumes its own.
inline constexpr int kMissedBeatsBeforeLost = 10;
inline constexpr std::chrono::seconds kMinStalenessLimit{60};

// max(kMinStalenessLimit, kMissedBeatsBeforeLost x flush_interval), in seconds.
double staleness_limit_s(std::chrono::duration<double> flush_interval);

// A writer beats at least this often, even with a longer flush interval, so
// a reader assuming a shorter one than the writer's never takes a healthy run
// for lost: the shortest limit (60 s) is still six beats.
inline constexpr std::chrono::seconds kMaxBeatPeriod{10};
std::chrono::duration<double> beat_period(std::chrono::duration<double> flush_interval);  // min of the two

// gethostname(), as the trainer records it in a run's `host`; "" if unknown.
std::string this_host_name();

// Whether a process with this id exists on this machine. kill(pid, 0) sends
// nothing; EPERM means it exists but belongs to another user. A zombie (dead,
// not yet reaped) does not count.
bool process_exists(std::int64_t pid);

// What a reader knows about a run whose stored status is 'running'.
struct RunPulse {
  std::string host;               // where it runs
  std::int64_t pid = 0;           // its process there; 0 when unknown (older rows)
  double seconds_since_seen = 0;  // now - its last heartbeat (or its start if it never beat)
};

// Lost when its heartbeat is older than the limit (any host; also covers a
// pid reused by another process), or when it runs on this host and its
// process no longer exists (seen at once, without waiting for the limit).
// Containers that share a host name but not a process-id namespace would see
// each other's runs as lost; give each container its own host name (Docker's
// default) when they share a run store.
bool run_is_lost(const RunPulse& run, const std::string& this_host, double staleness_limit_s);

}  // namespace orchestrate
