#include "live_run_events.h"

#include <chrono>
#include <filesystem>

#include "orchestrate/error.h"
#include "tensorboard_export.h"

namespace orchestrate::tensorboard {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

LiveRunEvents::LiveRunEvents(std::string directory, std::string run_name, std::string host)
    : directory_(std::move(directory)), run_name_(std::move(run_name)), host_(std::move(host)) {}

EventFileWriter& LiveRunEvents::writer_for(std::int64_t run_id) {
  if (writer_) return *writer_;
  RunSummary run;
  run.id = run_id;
  run.name = run_name_;
  const std::filesystem::path run_directory = std::filesystem::path(directory_) / run_directory_name(run);
  std::error_code error;
  std::filesystem::create_directories(run_directory, error);
  if (error)
    throw Error("[log] tensorboard: cannot make " + run_directory.string() + ": " + error.message());
  // A resumed run gets a file of its own beside the first: TensorBoard reads both.
  const double started = now_s();
  event_file_ = (run_directory / event_file_name(started, host_)).string();
  writer_ = std::make_unique<EventFileWriter>(event_file_, started);
  return *writer_;
}

void LiveRunEvents::step(std::int64_t, const StepTiming& row) {
  if (row.rank != 0) return;
  ++rows_;
  images_ += row.images;
  total_s_ += row.total_s;
  data_wait_s_ += row.data_wait_s;
  compute_s_ += row.compute_s;
  sync_s_ += row.sync_s;
  optimizer_s_ += row.optimizer_s;
  learning_rate_ = row.learning_rate;
}

void LiveRunEvents::metrics(std::int64_t run_id, std::int64_t step, const MetricValues& values) {
  EventFileWriter& events = writer_for(run_id);
  const double now = now_s();
  bool log_point = false;
  for (const auto& [name, value] : values) {
    events.add_scalar(name, step, now, value);
    log_point = log_point || name == "train/loss";
  }
  if (log_point && rows_ > 0 && total_s_ > 0) {
    events.add_scalar("train/learning_rate", step, now, learning_rate_);
    events.add_scalar("perf/images_per_s", step, now, static_cast<double>(images_) / total_s_);
    events.add_scalar("perf/step_s", step, now, total_s_ / static_cast<double>(rows_));
    events.add_scalar("perf/data_wait_share", step, now, data_wait_s_ / total_s_);
    events.add_scalar("perf/compute_share", step, now, compute_s_ / total_s_);
    events.add_scalar("perf/sync_share", step, now, sync_s_ / total_s_);
    events.add_scalar("perf/optimizer_share", step, now, optimizer_s_ / total_s_);
    rows_ = images_ = 0;
    total_s_ = data_wait_s_ = compute_s_ = sync_s_ = optimizer_s_ = 0;
  }
  events.flush();
}

}  // namespace orchestrate::tensorboard
