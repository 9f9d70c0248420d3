#include "store/record_call_clock.h"

#include <cstdlib>
#include <sstream>

#include "orchestrate/error.h"

namespace orchestrate {

RecordCallClock::Mode RecordCallClock::mode_from_environment() {
  const char* value = std::getenv("ORCHESTRATE_STORE_BENCHMARK");
  const std::string mode = value == nullptr ? "" : value;
  if (mode.empty()) return Mode::off;
  if (mode == "measure") return Mode::measure;
  if (mode == "discard") return Mode::discard;
  throw Error("ORCHESTRATE_STORE_BENCHMARK=" + mode + ": unknown; give measure or discard, or unset it");
}

RecordCallClock::Timed::~Timed() {
  if (clock_ == nullptr) return;
  const auto spent = std::chrono::steady_clock::now() - start_;
  clock_->calls_.fetch_add(1, std::memory_order_relaxed);
  clock_->nanoseconds_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count(),
                                 std::memory_order_relaxed);
}

std::string RecordCallClock::summary(const std::string& path) const {
  if (mode_ == Mode::off) return "";
  std::ostringstream text;
  text << "run store " << path << ": " << calls_.load() << " record calls (ORCHESTRATE_STORE_BENCHMARK="
       << (mode_ == Mode::measure ? "measure" : "discard") << ") took " << nanoseconds_.load() * 1e-9
       << " s on their callers' threads";
  return text.str();
}

}  // namespace orchestrate
