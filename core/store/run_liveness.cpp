#include "store/run_liveness.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <fstream>
#include <string>

namespace orchestrate {

double staleness_limit_s(std::chrono::duration<double> flush_interval) {
  return std::max(std::chrono::duration<double>(kMinStalenessLimit).count(),
                  kMissedBeatsBeforeLost * flush_interval.count());
}

std::chrono::duration<double> beat_period(std::chrono::duration<double> flush_interval) {
  return std::min<std::chrono::duration<double>>(flush_interval, kMaxBeatPeriod);
}

std::string this_host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "";
  return name.data();
}

bool process_exists(std::int64_t pid) {
  // pid_t is narrower than the stored integer; an id that does not fit names no process.
  if (pid <= 0 || pid != static_cast<pid_t>(pid)) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  // A process killed but not yet reaped (its parent has not waited, or a
  // container's init never does) is a zombie: it runs nothing any more.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;  // no /proc to tell: it exists
  const auto name_end = line.rfind(')');
  return name_end == std::string::npos || name_end + 2 >= line.size() || line[name_end + 2] != 'Z';
}

bool run_is_lost(const RunPulse& run, const std::string& this_host, double staleness_limit_s) {
  if (run.seconds_since_seen > staleness_limit_s) return true;
  const bool here = !this_host.empty() && run.host == this_host;
  return here && run.pid > 0 && !process_exists(run.pid);
}

}  // namespace orchestrate
