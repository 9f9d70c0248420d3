#include "sweep/sweep_controller.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "engine/train/progress_line.h"
#include "engine/train/stop_signal.h"
#include "orchestrate/error.h"
#include "store/metric_history.h"
#include "sweep/rung_values.h"
#include "sweep/sweep_ranking.h"

namespace orchestrate::sweep {

namespace fs = std::filesystem;

namespace {

const std::string kErrorPrefix = "orchestrate: error: ";

bool ended(const SweepTrialRecord& trial) {
  return trial.state == "finished" || trial.state == "stopped" || trial.state == "failed";
}

std::string last_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

// What `run --format json` printed for the trial (print_outcome_json).
struct RunOutcome {
  std::string status;  // "" when it printed none (it failed first)
  std::int64_t run_id = 0, steps = 0;
  std::optional<double> value;
};

RunOutcome read_outcome(const std::string& path, const std::string& metric) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  RunOutcome outcome;
  try {
    const auto json = nlohmann::json::parse(text.str());
    outcome.status = json.at("status").get<std::string>();
    outcome.run_id = json.at("run_id").get<std::int64_t>();
    outcome.steps = json.at("steps").get<std::int64_t>();
    const auto& metrics = json.at("final_metrics");
    if (metrics.contains(metric) && metrics.at(metric).is_number()) outcome.value = metrics.at(metric).get<double>();
  } catch (const std::exception&) {
    outcome = RunOutcome{};  // none: its log says why
  }
  return outcome;
}

// "trial-3", then "trial-3.2", "trial-3.3" for the attempts that resume it.
std::string free_stem(const fs::path& dir, std::int64_t trial) {
  const std::string base = (dir / ("trial-" + std::to_string(trial))).string();
  std::string stem = base;
  for (int attempt = 2; fs::exists(stem + ".log"); ++attempt) stem = base + "." + std::to_string(attempt);
  return stem;
}

}  // namespace

SweepController::SweepController(const SweepSpec& spec, std::vector<SweepTrialRecord> trials,
                                 const SweepSetup& setup, RunStore& store, Executor& executor)
    : spec_(spec),
      trials_(std::move(trials)),
      setup_(setup),
      store_(store),
      scheduler_(spec.early_stopping, spec.mode),
      executor_(executor) {
  std::sort(trials_.begin(), trials_.end(), [](const auto& a, const auto& b) { return a.trial < b.trial; });
  for (std::size_t i = 0; i < trials_.size(); ++i)
    if (trials_[i].trial != static_cast<std::int64_t>(i))
      throw Error("sweep " + std::to_string(setup.sweep_id) + ": its trials are not numbered 0.." +
                  std::to_string(trials_.size() - 1) + " in " + setup.db);
  best_ = best_trial(trials_, spec_.mode);
}

std::string SweepController::store_of(std::int64_t trial) const {
  if (!executor_.trial_stores()) return setup_.db;
  return (fs::path(setup_.output_dir) / ("trial-" + std::to_string(trial) + ".db")).string();
}

std::map<std::int64_t, SweepController::TrialRun> SweepController::runs_by_trial(
    std::optional<std::int64_t> only) const {
  RunFilter filter;
  filter.tags = {{kSweepIdTag, std::to_string(setup_.sweep_id)}};
  if (only) filter.tags.emplace_back("trial", std::to_string(*only));
  std::map<std::int64_t, TrialRun> out;
  const auto add_runs = [&](const RunStore& store) {
    for (const RunSummary& run : store.find_runs(filter)) {
      const auto tag = run.tags.find("trial");
      if (tag == run.tags.end()) continue;
      const std::int64_t trial = std::stoll(tag->second);
      if (run.id > out[trial].id) out[trial] = {run.id, run.status, store.path()};
    }
  };
  if (!executor_.trial_stores()) {
    add_runs(store_);
    return out;
  }
  for (const SweepTrialRecord& trial : trials_) {
    const std::string db = store_of(trial.trial);
    if ((only && trial.trial != *only) || ended(trial) || !fs::exists(db)) continue;
    try {
      add_runs(RunStore(db, StoreAccess::read_only));
    } catch (const std::exception&) {
      // Not yet a store: its trial is creating it this moment.
    }
  }
  return out;
}

std::int64_t SweepController::import_trial(std::int64_t trial, std::int64_t id) {
  const auto ids = store_.import_runs(store_of(trial));
  const auto here = ids.find(id);
  if (here == ids.end())
    throw Error("sweep: trial " + std::to_string(trial) + "'s store " + store_of(trial) + " has no run " +
                std::to_string(id));
  return here->second;
}

Job SweepController::job_for(const SweepTrialRecord& trial) const {
  Job job;
  job.trial = trial.trial;
  job.program = setup_.engine;
  const std::string stem = free_stem(setup_.output_dir, trial.trial);
  job.stdout_path = stem + ".json";
  job.stderr_path = stem + ".log";
  const std::string number = std::to_string(trial.trial);
  const std::string db = store_of(trial.trial);
  job.arguments = {"run", setup_.recipe_path, "--quiet", "--format", "json", "--db", db,
                   "--tag", "sweep=" + spec_.name, "--tag",
                   std::string(kSweepIdTag) + "=" + std::to_string(setup_.sweep_id),
                   "--tag", "trial=" + number, "--set", "run.name=" + spec_.name + "-" + number,
                   "--set", "run.threads=" + std::to_string(spec_.threads)};
  for (const auto& [key, value] : trial.overrides)
    job.arguments.insert(job.arguments.end(), {"--set", key + "=" + value});
  if (spec_.nproc > 1) job.arguments.insert(job.arguments.end(), {"--nproc", std::to_string(spec_.nproc)});
  job.arguments.insert(job.arguments.end(), setup_.run_arguments.begin(), setup_.run_arguments.end());
  // Interrupted with a checkpoint: the exact resume carries it on (the same run, its steps exactly as unbroken).
  std::optional<std::int64_t> run_id = trial.run_id;
  if (executor_.trial_stores()) {  // its id in the trial's own store
    const auto runs = runs_by_trial(trial.trial);
    run_id = runs.count(trial.trial) ? std::optional(runs.at(trial.trial).id) : std::nullopt;
  }
  if (run_id && !RunStore(db, StoreAccess::read_only).checkpoints(*run_id).empty())
    job.arguments.insert(job.arguments.end(), {"--resume", std::to_string(*run_id)});
  return job;
}

void SweepController::record(const SweepTrialRecord& trial) {
  store_.record_sweep_trial(trial);
  const auto best = best_trial(trials_, spec_.mode);
  if (best != best_) store_.set_sweep_best(setup_.sweep_id, best);
  best_ = best;
}

bool SweepController::watch_rungs(SweepTrialRecord& trial, const TrialRun& run, bool act) {
  if (!scheduler_.stops_early() || !run.id) return false;
  const MetricHistory history = read_metric_history(run.db, run.id, spec_.metric);
  const auto series = history.find(spec_.metric);
  if (series == history.end()) return false;
  const auto met = rung_values(series->second, scheduler_, spec_.early_stopping.unit);
  std::size_t& seen = rungs_seen_[trial.trial];
  bool changed = false;
  for (; seen < met.size(); ++seen) {
    const RungValue& rung = met[seen];
    const bool go_on = scheduler_.reached(trial.trial, rung.rung, rung.value);
    trial.rung = static_cast<std::int64_t>(rung.rung);
    trial.step = rung.step;
    trial.value = rung.value;
    changed = true;
    if (!go_on && act) {
      stopping_.insert(trial.trial);
      trial.reason = "stopped at rung " + std::to_string(rung.rung) + " (" +
                     (spec_.early_stopping.unit == RungUnit::epochs ? "epoch " : "step ") +
                     std::to_string(scheduler_.rung_length(rung.rung)) + ")";
      executor_.interrupt(trial.trial);
      ++seen;
      break;
    }
  }
  return changed;
}

void SweepController::take_up() {
  executor_.interrupt_orphans();
  const auto started = std::chrono::steady_clock::now();
  for (bool told = false;; std::this_thread::sleep_for(std::chrono::seconds(1))) {
    std::vector<std::int64_t> live;
    for (const auto& [trial, run] : runs_by_trial())
      if (run.status == "running" && !ended(trials_.at(trial))) live.push_back(run.id);
    if (live.empty()) break;
    if (std::chrono::steady_clock::now() - started > kWaitForOrphans)
      throw UsageError("sweep " + std::to_string(setup_.sweep_id) + ": run " + std::to_string(live.front()) +
                       " of one of its trials still runs after " + std::to_string(kWaitForOrphans.count()) +
                       " s; stop it (kill -INT its process), then --resume again");
    if (!told)
      std::cerr << "sweep: waiting for " << live.size() << " trial run(s) of the last controller to save and end\n";
    told = true;
  }
  // Every rung met so far, in the order the trials met it: the scheduler's state when the last controller stopped.
  const auto runs = runs_by_trial();
  std::vector<std::tuple<double, std::int64_t, RungValue>> met;
  for (SweepTrialRecord& trial : trials_) {
    if (const auto run = runs.find(trial.trial); run != runs.end())
      trial.run_id = executor_.trial_stores() ? import_trial(trial.trial, run->second.id) : run->second.id;
    if (trial.state == "running") trial.state = "interrupted";  // its controller died
    if (!trial.run_id || !scheduler_.stops_early()) continue;
    const MetricHistory history = read_metric_history(setup_.db, trial.run_id, spec_.metric);
    if (const auto series = history.find(spec_.metric); series != history.end())
      for (const RungValue& rung : rung_values(series->second, scheduler_, spec_.early_stopping.unit))
        met.emplace_back(rung.wall_time, trial.trial, rung);
  }
  std::stable_sort(met.begin(), met.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  for (const auto& [when, number, rung] : met) {
    SweepTrialRecord& trial = trials_.at(number);
    ++rungs_seen_[number];
    if (trial.state == "stopped" && trial.rung && static_cast<std::size_t>(*trial.rung) < rung.rung) continue;
    const bool go_on = scheduler_.reached(number, rung.rung, rung.value);
    if (ended(trial)) continue;
    trial.rung = static_cast<std::int64_t>(rung.rung);
    trial.step = rung.step;
    trial.value = rung.value;
    if (!go_on) {
      trial.state = "stopped";
      trial.reason = "stopped at rung " + std::to_string(rung.rung) + " (taken up from the stopped controller)";
    }
  }
  for (const SweepTrialRecord& trial : trials_) record(trial);
}

void SweepController::on_tick() {
  const auto runs = runs_by_trial();
  for (SweepTrialRecord& trial : trials_) {
    if (ended(trial) || stopping_.count(trial.trial)) continue;
    const auto run = runs.find(trial.trial);
    if (run == runs.end() || run->second.status != "running") continue;
    bool changed = trial.state != "running";
    trial.state = "running";
    // A trial of its own store links to the sweep's copy of its run once it ends.
    if (!executor_.trial_stores()) {
      changed |= trial.run_id != run->second.id;
      trial.run_id = run->second.id;
    }
    changed |= watch_rungs(trial, run->second, true);
    if (changed) record(trial);
  }
}

void SweepController::on_finished(const Finished& finished) {
  SweepTrialRecord& trial = trials_.at(finished.job->trial);
  trial.seconds += finished.seconds;
  const RunOutcome outcome = read_outcome(finished.job->stdout_path, spec_.metric);
  std::optional<TrialRun> run;  // in the store it recorded in
  if (const auto runs = runs_by_trial(trial.trial); runs.count(trial.trial)) run = runs.at(trial.trial);
  if (outcome.run_id) run = TrialRun{outcome.run_id, outcome.status, store_of(trial.trial)};
  const bool stopped_by_scheduler = stopping_.count(trial.trial) > 0;
  // The rungs it met in its last moments count for the trials after it.
  if (!stopped_by_scheduler && run) watch_rungs(trial, *run, false);
  std::string import_failure;
  if (run && executor_.trial_stores()) {
    try {
      trial.run_id = import_trial(trial.trial, run->id);
    } catch (const std::exception& e) {
      import_failure = "its run could not be brought into " + setup_.db + ": " + e.what();
    }
  } else if (run) {
    trial.run_id = run->id;
  }
  if (!import_failure.empty()) {
    trial.state = "failed";
    trial.reason = import_failure;
  } else if (outcome.status == "finished") {
    trial.state = "finished";
    trial.value = outcome.value;
    trial.step = outcome.steps;
    trial.reason.clear();
  } else if (stopped_by_scheduler) {
    trial.state = "stopped";
  } else if (outcome.status == "interrupted" || (outcome.status.empty() && finished.exit_code == 130)) {
    trial.state = "interrupted";
  } else {
    trial.state = "failed";
    trial.reason = last_line_of(finished.job->stderr_path);
    if (trial.reason.rfind(kErrorPrefix, 0) == 0) trial.reason.erase(0, kErrorPrefix.size());
    if (trial.reason.empty()) trial.reason = "exit code " + std::to_string(finished.exit_code);
  }
  ++ended_;
  job_seconds_ += finished.seconds;
  record(trial);
  const bool tty = isatty(STDERR_FILENO);
  std::cerr << (tty ? "\r\033[K" : "") << "trial " << trial.trial << " " << trial.state
            << (trial.value ? " " + spec_.metric + " " + std::to_string(*trial.value) : "")
            << (trial.reason.empty() ? "" : ": " + trial.reason) << " ("
            << ProgressLine::format_duration(finished.seconds) << ")\n";
  if (!tty) std::cerr << status_line(finished.still_running) << "\n";
}

std::string SweepController::status_line(std::size_t running) const {
  std::size_t finished = 0, stopped = 0, failed = 0;
  for (const SweepTrialRecord& trial : trials_) {
    finished += trial.state == "finished";
    stopped += trial.state == "stopped";
    failed += trial.state == "failed";
  }
  std::ostringstream line;
  line << "sweep " << spec_.name << ": " << finished + stopped + failed << "/" << trials_.size() << " done ("
       << finished << " finished, " << stopped << " stopped, " << failed << " failed), " << running << " running";
  if (best_ && trials_.at(*best_).value)
    line << "; best " << spec_.metric << " " << *trials_.at(*best_).value << " (trial " << *best_ << ")";
  // Jobs left, at the mean time of those ended, in waves of the machine's slots.
  if (ended_ > 0 && jobs_ > ended_) {
    const double left = static_cast<double>(jobs_ - ended_);
    const double slots = std::max(1, executor_.slots());
    line << "; ETA " << ProgressLine::format_duration(job_seconds_ / ended_ * std::ceil(left / slots));
  }
  return line.str();
}

std::vector<SweepTrialRecord> SweepController::run() {
  fs::create_directories(setup_.output_dir);
  std::vector<Job> jobs;
  for (const SweepTrialRecord& trial : trials_)
    if (!ended(trial)) jobs.push_back(job_for(trial));
  jobs_ = jobs.size();
  const bool tty = isatty(STDERR_FILENO);
  const auto started = std::chrono::steady_clock::now();
  StopSignal stop;
  executor_.run(
      jobs, [&](const Finished& finished) { on_finished(finished); },
      [&](int running) {
        on_tick();
        if (tty) std::cerr << "\r\033[K" << status_line(running) << std::flush;
      },
      [&]() { return stop.requested(); });
  if (tty) std::cerr << "\r\033[K";
  stopped_ = stop.requested();
  std::cerr << "sweep " << spec_.name << ": " << ended_ << " of " << jobs.size() << " trial runs ended in "
            << ProgressLine::format_duration(
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count())
            << (stopped_ ? " (stopped by " + stop_signal_name(stop.signal_number()) + ")" : "") << "\n";
  return trials_;
}

}  // namespace orchestrate::sweep
