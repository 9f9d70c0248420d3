// The run store as the datasets' event sink: what a dataset reports (bad
// items it skipped, while indexing or when read from a pipeline thread) is
// recorded as an event of the run, shown by `orchestrate show RUN`.
#pragma once

#include <cstdint>
#include <string>

#include "orchestrate/dataset.h"
#include "store/run_recorder.h"
#include "store/run_records.h"

namespace orchestrate {


class RunDataEvents final : public DataEventSink {
 public:
  explicit RunDataEvents(const RunRecorder& recorder) : recorder_(recorder) {}
  void event(const std::string& kind, const std::string& message) override;  // thread-safe, as the store is

 private:
  const RunRecorder recorder_;
};

}  // namespace orchestrate
