// One TensorBoard event file: TFRecord-framed Event protos, the first saying
// the file's version ("brain.Event:2"), the rest one scalar each. What
// TensorFlow's tf.summary writer and PyTorch's SummaryWriter write, read by
// TensorBoard and its EventAccumulator.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "orchestrate/tfrecord/record_framing.h"

namespace orchestrate::tensorboard {

// TensorBoard only reads files whose name holds "tfevents":
// "events.out.tfevents.<seconds>.<host>", as TensorFlow names them.
std::string event_file_name(double wall_time, const std::string& host);

class EventFileWriter {
 public:
  // Creates (truncates) `path` and writes the version event, stamped `wall_time`.
  EventFileWriter(const std::string& path, double wall_time);

  // One scalar summary: `tag` at `step`, recorded at `wall_time` (seconds
  // since 1970 UTC). TensorBoard stores simple values as 32-bit floats.
  void add_scalar(const std::string& tag, std::int64_t step, double wall_time, double value);

  // The run's hyperparameters for TensorBoard's HPARAMS tab: the hparams
  // plugin's session start ("_hparams_/session_start_info"), each value a
  // number, a boolean or a string as its text reads ("0.1", "true", "adam").
  void add_hparams(const std::vector<std::pair<std::string, std::string>>& hparams, double wall_time);

  // Hands the events written so far to the system, so a TensorBoard reading
  // the file now sees them; throws DataError if a write failed.
  void flush() { records_.flush(); }
  // Flushes and closes; throws DataError if any write failed.
  void close();

 private:
  tfrecord::TfRecordWriter records_;
};

}  // namespace orchestrate::tensorboard
