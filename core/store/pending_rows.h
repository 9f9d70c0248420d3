// Rows recorded but not yet written, in the order they were recorded. The
// run store keeps them here between flushes and while the database is busy.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "store/run_store.h"

namespace orchestrate {

struct PendingMetric {
  std::int64_t run_id = 0, step = 0, epoch = 0;
  std::string name;
  double value = 0;
  std::string recorded_at;
};

struct PendingEvent {
  std::int64_t run_id = 0;
  std::string time, kind, message;
};

// A checkpoint recorded or forgotten; one queue keeps a forget after the
// record it undoes.
struct PendingCheckpointChange {
  bool forget = false;  // delete the rows with record.run_id and record.path
  CheckpointRecord record;
};

struct PendingRows {
  std::vector<std::pair<std::int64_t, StepTiming>> steps;  // (run id, timing)
  std::vector<PendingMetric> metrics;
  std::vector<PendingEvent> events;
  std::vector<PendingCheckpointChange> checkpoint_changes;

  std::size_t size() const { return steps.size() + metrics.size() + events.size() + checkpoint_changes.size(); }
  bool empty() const { return size() == 0; }

  // Takes back the newest record (not a forget) of this checkpoint that is
  // still waiting: a checkpoint that will not be published must not be
  // listed later. False when none waits.
  bool withdraw_checkpoint(std::int64_t run_id, const std::string& path) {
    for (auto change = checkpoint_changes.rbegin(); change != checkpoint_changes.rend(); ++change) {
      if (!change->forget && change->record.run_id == run_id && change->record.path == path) {
        checkpoint_changes.erase(std::next(change).base());
        return true;
      }
    }
    return false;
  }

  // Puts `earlier` (rows taken out for a write that failed) back in front of
  // the rows recorded since, so the order of recording is kept.
  void put_back_in_front(PendingRows&& earlier) {
    in_front(steps, earlier.steps);
    in_front(metrics, earlier.metrics);
    in_front(events, earlier.events);
    in_front(checkpoint_changes, earlier.checkpoint_changes);
  }

 private:
  template <class Row>
  static void in_front(std::vector<Row>& rows, std::vector<Row>& earlier) {
    rows.insert(rows.begin(), std::make_move_iterator(earlier.begin()), std::make_move_iterator(earlier.end()));
  }
};

}  // namespace orchestrate
