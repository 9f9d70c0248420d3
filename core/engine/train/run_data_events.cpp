#include "engine/train/run_data_events.h"

namespace orchestrate {

void RunDataEvents::event(const std::string& kind, const std::string& message) {
  recorder_.event(kind, message);
}

}  // namespace orchestrate
