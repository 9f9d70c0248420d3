#include "event_file_writer.h"

#include <cmath>
#include <sstream>

#include "event.pb.h"

namespace orchestrate::tensorboard {

std::string event_file_name(double wall_time, const std::string& host) {
  std::ostringstream name;
  name << "events.out.tfevents." << static_cast<std::int64_t>(std::floor(wall_time)) << "." << host;
  return name.str();
}

EventFileWriter::EventFileWriter(const std::string& path, double wall_time) : records_(path) {
  Event version;
  version.set_wall_time(wall_time);
  version.set_file_version("brain.Event:2");
  records_.write(version.SerializeAsString());
}

void EventFileWriter::add_scalar(const std::string& tag, std::int64_t step, double wall_time, double value) {
  Event event;
  event.set_wall_time(wall_time);
  event.set_step(step);
  Summary::Value* scalar = event.mutable_summary()->add_value();
  scalar->set_tag(tag);
  scalar->set_simple_value(static_cast<float>(value));
  records_.write(event.SerializeAsString());
}

void EventFileWriter::close() { records_.close(); }

}  // namespace orchestrate::tensorboard
