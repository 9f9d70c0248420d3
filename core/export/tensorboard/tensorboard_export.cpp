#include "export/tensorboard/tensorboard_export.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <utility>
#include <vector>

#include "export/tensorboard/event_file_writer.h"
#include "export/tensorboard/live_run_events.h"
#include "orchestrate/error.h"

namespace orchestrate::tensorboard {
namespace {

namespace fs = std::filesystem;

std::string safe_for_file_name(const std::string& text) {
  std::string safe = text;
  for (char& ch : safe)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '-' && ch != '_') ch = '_';
  return safe.empty() ? "_" : safe;
}

// The earliest record's time: when the run began to report.
double first_wall_time(const MetricHistory& history) {
  double first = 0;
  for (const auto& [name, points] : history)
    for (const MetricPoint& point : points)
      if (first == 0 || point.wall_time < first) first = point.wall_time;
  return first;
}

}  // namespace

std::string run_directory_name(const RunSummary& run) {
  return std::to_string(run.id) + "-" + safe_for_file_name(run.name);
}

ExportedRun export_run(const RunSummary& run, const MetricHistory& history, const std::vector<StepTiming>& rows,
                       const std::vector<std::pair<std::string, std::string>>& params, const std::string& directory) {
  const fs::path run_directory = fs::path(directory) / run_directory_name(run);
  std::error_code error;
  fs::create_directories(run_directory, error);
  if (error)
    throw Error("export tensorboard: cannot make " + run_directory.string() + ": " + error.message() +
                " (choose a directory you can write)");

  const double started = first_wall_time(history);
  ExportedRun exported;
  exported.event_file = (run_directory / event_file_name(started, safe_for_file_name(run.host))).string();
  // In step order across every metric, as a training job writes them:
  // TensorBoard takes a step lower than the last one for a restarted job and
  // drops what it read after that step (purge_orphaned_data).
  std::vector<std::pair<const std::string*, const MetricPoint*>> in_order;
  for (const auto& [name, points] : history)
    for (const MetricPoint& point : points) in_order.emplace_back(&name, &point);
  std::stable_sort(in_order.begin(), in_order.end(), [](const auto& a, const auto& b) {
    return a.second->step != b.second->step ? a.second->step < b.second->step
                                            : a.second->wall_time < b.second->wall_time;
  });
  // Replayed as the run recorded them (live_run_events.h): the rows up to
  // each metric batch first, so the log points get the same learning rate,
  // images/s and phase shares a live file got.
  RunEvents events(exported.event_file, started);
  events.hparams(params, started);
  std::size_t next_row = 0;
  for (std::size_t i = 0; i < in_order.size();) {
    const std::int64_t step = in_order[i].second->step;
    const double wall_time = in_order[i].second->wall_time;
    MetricValues batch;
    for (; i < in_order.size() && in_order[i].second->step == step && in_order[i].second->wall_time == wall_time; ++i)
      batch.emplace_back(*in_order[i].first, in_order[i].second->value);
    for (; next_row < rows.size() && rows[next_row].step <= step; ++next_row) events.step(rows[next_row]);
    events.metrics(step, batch, wall_time);
  }
  events.close();
  exported.scalars = events.scalars();
  return exported;
}

}  // namespace orchestrate::tensorboard
