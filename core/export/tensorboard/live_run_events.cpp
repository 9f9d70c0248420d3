#include "export/tensorboard/live_run_events.h"

#include <chrono>
#include <filesystem>

#include "export/tensorboard/tensorboard_export.h"
#include "orchestrate/error.h"

namespace orchestrate::tensorboard {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

RunEvents::RunEvents(const std::string& event_file, double wall_time) : events_(event_file, wall_time) {}

void RunEvents::add(const std::string& tag, std::int64_t step, double wall_time, double value) {
  events_.add_scalar(tag, step, wall_time, value);
  ++scalars_;
}

void RunEvents::step(const StepTiming& row) {
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

void RunEvents::metrics(std::int64_t step, const MetricValues& values, double wall_time) {
  bool log_point = false, has_learning_rate = false;
  for (const auto& [name, value] : values) {
    add(name, step, wall_time, value);
    log_point = log_point || name == "train/loss";
    has_learning_rate = has_learning_rate || name == "train/learning_rate";
  }
  if (!log_point || rows_ == 0 || total_s_ <= 0) return;
  // Runs recorded before the lr was a metric: from their step rows.
  if (!has_learning_rate) add("train/learning_rate", step, wall_time, learning_rate_);
  add("perf/images_per_s", step, wall_time, static_cast<double>(images_) / total_s_);
  add("perf/step_s", step, wall_time, total_s_ / static_cast<double>(rows_));
  add("perf/data_wait_share", step, wall_time, data_wait_s_ / total_s_);
  add("perf/compute_share", step, wall_time, compute_s_ / total_s_);
  add("perf/sync_share", step, wall_time, sync_s_ / total_s_);
  add("perf/optimizer_share", step, wall_time, optimizer_s_ / total_s_);
  rows_ = images_ = 0;
  total_s_ = data_wait_s_ = compute_s_ = sync_s_ = optimizer_s_ = 0;
}

LiveRunEvents::LiveRunEvents(std::string directory, std::string run_name, std::string host,
                             std::vector<std::pair<std::string, std::string>> params)
    : directory_(std::move(directory)), run_name_(std::move(run_name)), host_(std::move(host)), params_(std::move(params)) {}

RunEvents& LiveRunEvents::events_for(std::int64_t run_id) {
  if (events_) return *events_;
  RunSummary run;
  run.id = run_id;
  run.name = run_name_;
  const std::filesystem::path run_directory = std::filesystem::path(directory_) / run_directory_name(run);
  std::error_code error;
  std::filesystem::create_directories(run_directory, error);
  if (error) throw Error("[log] tensorboard: cannot make " + run_directory.string() + ": " + error.message());
  // A resumed run gets a file of its own beside the first: TensorBoard reads both.
  const double started = now_s();
  events_ = std::make_unique<RunEvents>((run_directory / event_file_name(started, host_)).string(), started);
  events_->hparams(params_, started);
  return *events_;
}

void LiveRunEvents::step(std::int64_t run_id, const StepTiming& row) { events_for(run_id).step(row); }

void LiveRunEvents::metrics(std::int64_t run_id, std::int64_t step, const MetricValues& values) {
  RunEvents& events = events_for(run_id);
  events.metrics(step, values, now_s());
  events.flush();
}

}  // namespace orchestrate::tensorboard
