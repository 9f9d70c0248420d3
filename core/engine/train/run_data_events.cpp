#include "run_data_events.h"
#include "run_store.h"

namespace orchestrate {

void RunDataEvents::event(const std::string& kind, const std::string& message) {
  store_.record_event(run_id_, kind, message);
}

}  // namespace orchestrate
