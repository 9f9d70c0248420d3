// One TensorBoard event file: TFRecord-framed Event protos, the first saying
// the file's version ("brain.Event:2"), the rest one scalar each. What
// TensorFlow's tf.summary writer and PyTorch's SummaryWriter write, read by
// TensorBoard and its EventAccumulator.
#pragma once

#include <cstdint>
#include <string>

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

  // Hands the events written so far to the system, so a TensorBoard reading
  // the file now sees them; throws DataError if a write failed.
  void flush() { records_.flush(); }
  // Flushes and closes; throws DataError if any write failed.
  void close();

 private:
  tfrecord::TfRecordWriter records_;
};

}  // namespace orchestrate::tensorboard
