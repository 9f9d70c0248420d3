#include "export/mlflow/mlflow_export.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>
#include <vector>

#include "orchestrate/error.h"

namespace orchestrate::mlflow {
namespace {

namespace fs = std::filesystem;

// MLflow's limits on what its stores keep (mlflow.utils.validation).
constexpr std::size_t kMaxParamValue = 6000, kMaxTagValue = 8000, kMaxKey = 250;

std::string sha256_hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  static const char* const hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

// A key as a path under params/, metrics/ or tags/: MLflow's own characters
// (letters, digits, _ - . space /), anything else '_', and no empty, "." or
// ".." component, so a user's tag cannot write outside the run's directory.
std::string safe_key(const std::string& key) {
  std::string safe;
  for (char ch : key.substr(0, kMaxKey)) {
    const bool allowed = std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.' ||
                         ch == ' ' || ch == '/';
    safe += allowed ? ch : '_';
  }
  std::string joined;
  std::size_t start = 0;
  while (start <= safe.size()) {
    const std::size_t end = std::min(safe.find('/', start), safe.size());
    std::string part = safe.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") part = "_";
    joined += (joined.empty() ? "" : "/") + part;
    start = end + 1;
  }
  return joined;
}

// A YAML scalar in single quotes: nothing in it is special but the quote,
// which doubles. Hand-written: the meta files are a dozen flat scalars, not
// worth a YAML library.
std::string yaml_text(const std::string& text) {
  std::string quoted = "'";
  for (char ch : text) {
    if (ch == '\'') quoted += "''";
    else if (ch == '\n' || ch == '\r') quoted += ' ';
    else quoted += ch;
  }
  return quoted + "'";
}

// "2026-11-26T11:15:38.226Z" -> milliseconds since 1970 UTC; none for "".
std::optional<long long> epoch_ms(const std::string& iso) {
  std::tm time{};
  int millis = 0;
  if (std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &time.tm_year, &time.tm_mon, &time.tm_mday,
                  &time.tm_hour, &time.tm_min, &time.tm_sec, &millis) < 6)
    return std::nullopt;
  time.tm_year -= 1900;
  time.tm_mon -= 1;
  return static_cast<long long>(timegm(&time)) * 1000 + millis;
}

std::string number_text(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char digits[32];
  const auto result = std::to_chars(digits, digits + sizeof digits, value);  // shortest that reads back the same
  return std::string(digits, result.ptr);
}

void write_file(const fs::path& path, const std::string& text) {
  std::error_code error;
  fs::create_directories(path.parent_path(), error);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush())
    throw Error("export mlflow: cannot write " + path.string() + " (choose a directory you can write)");
}

std::string file_uri(const fs::path& path) { return "file://" + fs::absolute(path).lexically_normal().string(); }

// MLflow's RunStatus: RUNNING 1, FINISHED 3, FAILED 4, KILLED 5. A lost run
// died without a word: failed.
int mlflow_status(const std::string& status) {
  if (status == "running") return 1;
  if (status == "finished") return 3;
  if (status == "interrupted") return 5;
  return 4;
}

void write_experiment_meta(const fs::path& directory, const std::string& id, const std::string& name) {
  const fs::path meta = directory / id / "meta.yaml";
  if (fs::exists(meta)) return;
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  write_file(meta, "artifact_location: " + yaml_text(file_uri(directory / id)) + "\ncreation_time: " +
                       std::to_string(now) + "\nexperiment_id: " + yaml_text(id) + "\nlast_update_time: " +
                       std::to_string(now) + "\nlifecycle_stage: active\nname: " + yaml_text(name) + "\n");
}

std::string user_name() {
  const char* user = std::getenv("USER");
  return user && *user ? user : "orchestrate";
}

// A run's directory, emptied (a second export replaces the first), with its meta.yaml.
void write_run_meta(const fs::path& run_dir, const std::string& run_id, const std::string& experiment,
                    const std::string& name, std::optional<long long> start, std::optional<long long> end,
                    int status) {
  std::error_code error;
  fs::remove_all(run_dir, error);
  fs::create_directories(run_dir / "artifacts", error);
  if (error)
    throw Error("export mlflow: cannot make " + run_dir.string() + ": " + error.message() +
                " (choose a directory you can write)");
  write_file(run_dir / "meta.yaml",
             "artifact_uri: " + yaml_text(file_uri(run_dir / "artifacts")) + "\nend_time: " +
                 (end ? std::to_string(*end) : "null") + "\nentry_point_name: ''\nexperiment_id: " +
                 yaml_text(experiment) + "\nlifecycle_stage: active\nrun_id: " + run_id + "\nrun_name: " +
                 yaml_text(name) + "\nsource_name: ''\nsource_type: 4\nsource_version: ''\n" +
                 "start_time: " + (start ? std::to_string(*start) : "null") + "\nstatus: " + std::to_string(status) +
                 "\ntags: []\nuser_id: " + yaml_text(user_name()) + "\n");
}

void write_tags(const fs::path& run_dir, const std::vector<std::pair<std::string, std::string>>& tags) {
  for (const auto& [key, value] : tags) write_file(run_dir / "tags" / safe_key(key), value.substr(0, kMaxTagValue));
}

}  // namespace

std::string experiment_id(const std::string& name) {
  // 15 hex digits: 60 bits, an integer below 2^63 as MLflow's SQL store needs.
  return std::to_string(std::stoull(sha256_hex("orchestrate experiment|" + name).substr(0, 15), nullptr, 16));
}

void write_experiment(const std::string& directory, const std::string& name) {
  write_experiment_meta(directory, "0", "Default");
  write_experiment_meta(directory, experiment_id(name), name);
}

ExportedRun export_run(const RunDetails& details, const MetricHistory& history, const std::string& directory,
                       const std::string& experiment_name, const std::string& parent_run_id) {
  const RunSummary& run = details.summary;
  const RunRecord& record = details.record;
  const std::string experiment = experiment_id(experiment_name);
  ExportedRun exported;
  exported.run_id = sha256_hex("orchestrate run|" + run.host + "|" + run.started_at + "|" + std::to_string(run.id) +
                               "|" + run.name)
                        .substr(0, 32);
  const fs::path run_dir = fs::path(directory) / experiment / exported.run_id;
  exported.directory = run_dir.string();
  write_run_meta(run_dir, exported.run_id, experiment, run.name, epoch_ms(run.started_at),
                 epoch_ms(run.status == "lost" ? run.last_seen_at : run.ended_at), mlflow_status(run.status));

  for (const auto& [key, value] : record.params) {
    write_file(run_dir / "params" / safe_key(key), value.substr(0, kMaxParamValue));
    ++exported.params;
  }

  for (const auto& [name, points] : history) {
    std::string lines;
    for (const MetricPoint& point : points) {
      lines += std::to_string(std::llround(point.wall_time * 1000)) + " " + number_text(point.value) + " " +
               std::to_string(point.step) + "\n";
      ++exported.metric_values;
    }
    write_file(run_dir / "metrics" / safe_key(name), lines);
  }

  std::vector<std::pair<std::string, std::string>> tags = {
      {"mlflow.runName", run.name},
      {"mlflow.source.type", "LOCAL"},
      {"mlflow.source.name", details.command_line.empty() ? record.recipe_path : details.command_line},
      {"mlflow.user", user_name()},
      {"mlflow.note.content", "Recorded by orchestrate as run " + std::to_string(run.id) + " on " + run.host +
                                  ". The resolved recipe:\n\n```toml\n" + record.resolved_recipe + "```\n"},
      {"orchestrate.run_id", std::to_string(run.id)},
      {"orchestrate.status", run.status},
      {"orchestrate.kind", run.kind},
      {"orchestrate.host", record.host},
      {"orchestrate.device", record.device},
      {"orchestrate.world_size", std::to_string(record.world_size)},
      {"orchestrate.version", record.orchestrate_version},
      {"orchestrate.libtorch", record.torch_version}};
  if (run.source_run_id) tags.emplace_back("orchestrate.source_run", std::to_string(run.source_run_id));
  if (!record.git_revision.empty()) tags.emplace_back("mlflow.source.git.commit", record.git_revision);
  if (!run.error.empty()) tags.emplace_back("orchestrate.error", run.error);
  if (!parent_run_id.empty()) tags.emplace_back("mlflow.parentRunId", parent_run_id);  // MLflow's nested runs
  for (const auto& [key, value] : run.tags) tags.emplace_back(key, value);  // the user's own, last: they win
  write_tags(run_dir, tags);
  exported.tags = tags.size();

  write_file(run_dir / "artifacts" / "recipe.toml", record.resolved_recipe);
  return exported;
}

ExportedRun export_sweep(const SweepDetails& details, const std::string& directory,
                         const std::string& experiment_name) {
  const SweepRecord& sweep = details.sweep;
  const std::string experiment = experiment_id(experiment_name);
  ExportedRun exported;
  exported.run_id =
      sha256_hex("orchestrate sweep|" + sweep.host + "|" + sweep.started_at + "|" + std::to_string(sweep.id) + "|" +
                 sweep.name)
          .substr(0, 32);
  const fs::path run_dir = fs::path(directory) / experiment / exported.run_id;
  exported.directory = run_dir.string();
  // finished: FINISHED; running: RUNNING; stopped by Ctrl-C: KILLED; failed or lost: FAILED.
  const int status = sweep.state == "finished" ? 3 : sweep.state == "running" ? 1 : sweep.state == "stopped" ? 5 : 4;
  write_run_meta(run_dir, exported.run_id, experiment, sweep.name, epoch_ms(sweep.started_at),
                 epoch_ms(sweep.ended_at), status);
  const std::vector<std::pair<std::string, std::string>> params = {
      {"sweep.recipe", sweep.recipe_path}, {"sweep.metric", sweep.metric},     {"sweep.mode", sweep.mode},
      {"sweep.scheduler", sweep.scheduler}, {"sweep.trials", std::to_string(details.trials.size())}};
  for (const auto& [key, value] : params)
    write_file(run_dir / "params" / safe_key(key), value.substr(0, kMaxParamValue));
  exported.params = params.size();
  // The best trial's value, as the parent's metric: what MLflow's run list sorts the sweeps by.
  if (sweep.best_trial)
    for (const SweepTrialRecord& trial : details.trials)
      if (trial.trial == *sweep.best_trial && trial.value) {
        const auto when = epoch_ms(sweep.ended_at.empty() ? sweep.started_at : sweep.ended_at);
        write_file(run_dir / "metrics" / safe_key(sweep.metric),
                   std::to_string(when.value_or(0)) + " " + number_text(*trial.value) + " 0\n");
        exported.metric_values = 1;
      }
  std::vector<std::pair<std::string, std::string>> tags = {
      {"mlflow.runName", sweep.name},
      {"mlflow.source.type", "LOCAL"},
      {"mlflow.source.name", sweep.command_line},
      {"mlflow.user", user_name()},
      {"mlflow.note.content", "Sweep " + std::to_string(sweep.id) + " recorded by orchestrate on " + sweep.host +
                                  "; its trials are the child runs. The spec:\n\n```toml\n" + sweep.spec + "```\n"},
      {"orchestrate.sweep_id", std::to_string(sweep.id)},
      {"orchestrate.state", sweep.state}};
  if (sweep.best_trial) tags.emplace_back("orchestrate.best_trial", std::to_string(*sweep.best_trial));
  write_tags(run_dir, tags);
  exported.tags = tags.size();
  write_file(run_dir / "artifacts" / "sweep.toml", sweep.spec);
  return exported;
}

}  // namespace orchestrate::mlflow
