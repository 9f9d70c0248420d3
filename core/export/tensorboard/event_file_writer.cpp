#include "export/tensorboard/event_file_writer.h"

#include <charconv>
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

void EventFileWriter::add_hparams(const std::vector<std::pair<std::string, std::string>>& hparams, double wall_time) {
  HParamsPluginData data;
  data.set_version(0);
  SessionStartInfo* session = data.mutable_session_start_info();
  session->set_start_time_secs(wall_time);
  for (const auto& [key, text] : hparams) {
    HParamValue& value = (*session->mutable_hparams())[key];
    double number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (text == "true" || text == "false") value.set_bool_value(text == "true");
    else if (error == std::errc() && end == text.data() + text.size() && std::isfinite(number)) value.set_number_value(number);
    else if (text.size() >= 2 && text.front() == '"' && text.back() == '"') value.set_string_value(text.substr(1, text.size() - 2));
    else value.set_string_value(text);
  }
  Event event;
  event.set_wall_time(wall_time);
  Summary::Value* summary = event.mutable_summary()->add_value();
  summary->set_tag("_hparams_/session_start_info");
  summary->mutable_metadata()->mutable_plugin_data()->set_plugin_name("hparams");
  summary->mutable_metadata()->mutable_plugin_data()->set_content(data.SerializeAsString());
  records_.write(event.SerializeAsString());
}

void EventFileWriter::close() { records_.close(); }

}  // namespace orchestrate::tensorboard
