#include "engine/train/setup_timeline.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "analysis/table_format.h"

namespace orchestrate {

namespace {

std::string seconds_text(double seconds) { return fixed(seconds, 2) + " s"; }

}  // namespace

double process_age_seconds() {
  // Field 22 of /proc/self/stat is the start time in clock ticks after boot;
  // the command name (field 2, in parentheses) may hold spaces, so fields are
  // counted after its closing parenthesis.
  std::ifstream stat_file("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  const auto name_end = stat.rfind(')');
  std::ifstream uptime_file("/proc/uptime");
  double uptime = -1;
  if (name_end == std::string::npos || !(uptime_file >> uptime)) return -1;
  std::istringstream fields(stat.substr(name_end + 2));  // from field 3, the state
  std::string field;
  for (int index = 3; index < 22 && (fields >> field); ++index) {
  }
  unsigned long long start_ticks = 0;
  const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  if (!(fields >> start_ticks) || ticks_per_second <= 0) return -1;
  return uptime - static_cast<double>(start_ticks) / static_cast<double>(ticks_per_second);
}

void SetupTimeline::phase_done(std::string name) {
  const auto now = Clock::now();
  phases_.emplace_back(std::move(name), std::chrono::duration<double>(now - last_).count());
  last_ = now;
}

std::string SetupTimeline::text() const {
  std::string out;
  if (before_run_s_ >= 0) out = "before the run " + seconds_text(before_run_s_) + " (the process's start: LibTorch, "
                                "CUDA, the plugins); ";
  for (std::size_t i = 0; i < phases_.size(); ++i)
    out += (i ? ", " : "") + phases_[i].first + " " + seconds_text(phases_[i].second);
  out += "; " + seconds_text(std::chrono::duration<double>(last_ - began_).count()) + " in all since the run began";
  return out;
}

}  // namespace orchestrate
