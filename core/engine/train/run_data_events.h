// The run store as the datasets' event sink: what a dataset reports (bad
// items it skipped, while indexing or when read from a pipeline thread) is
// recorded as an event of the run, shown by `orchestrate show RUN`.
#pragma once

#include <cstdint>
#include <string>

#include "orchestrate/dataset.h"
#include "run_records.h"

namespace orchestrate {

class RunStore;

class RunDataEvents final : public DataEventSink {
 public:
  RunDataEvents(RunStore& store, std::int64_t run_id) : store_(store), run_id_(run_id) {}
  void event(const std::string& kind, const std::string& message) override;  // thread-safe, as the store is

 private:
  RunStore& store_;
  std::int64_t run_id_;
};

}  // namespace orchestrate
