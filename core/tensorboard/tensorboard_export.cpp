#include "tensorboard_export.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <utility>
#include <vector>

#include "event_file_writer.h"
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

ExportedRun export_run(const RunSummary& run, const MetricHistory& history, const std::string& directory) {
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
  EventFileWriter events(exported.event_file, started);
  for (const auto& [name, point] : in_order) events.add_scalar(*name, point->step, point->wall_time, point->value);
  events.close();
  exported.scalars = in_order.size();
  return exported;
}

}  // namespace orchestrate::tensorboard
