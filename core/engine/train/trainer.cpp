#include "engine/train/trainer.h"
#include "engine/setup/elapsed_seconds.h"
#include "store/run_store.h"

#include <chrono>
#include <optional>

#include "checkpoint/checkpointer.h"
#include "checkpoint/durable_file.h"
#include "checkpoint/resume.h"
#include "crash_report/crash_handler.h"
#include "distributed/collective.h"
#include "engine/recipe/recipe_settings.h"
#include "engine/recipe/usable_cores.h"
#include "engine/setup/components.h"
#include "engine/setup/compute_setup.h"
#include "engine/setup/run_identity.h"
#include "engine/setup/utilisation_baseline.h"
#include "engine/train/resume_length.h"
#include "engine/train/run_data_events.h"
#include "engine/train/run_hooks.h"
#include "engine/train/setup_timeline.h"
#include "engine/train/stop_signal.h"
#include "engine/train/training_run.h"
#include "export/serving_export.h"
#include "orchestrate/error.h"
#include "store/run_failure.h"

namespace orchestrate {

namespace {

using Clock = std::chrono::steady_clock;


std::string transfer_summary(const std::vector<TensorRecord>& records) {
  std::map<std::string, std::vector<std::string>> by_action;
  for (const auto& r : records) by_action[r.action].push_back(r.name);
  std::string out;
  for (const auto& [action, names] : by_action) {
    out += (out.empty() ? "" : "; ") + action + " " + std::to_string(names.size()) + ":";
    for (std::size_t i = 0; i < names.size() && i < 6; ++i) out += " " + names[i];
    if (names.size() > 6) out += " ...";
  }
  return out;
}

// The job's run: rank 0's id, on every rank (the other ranks record into
// scratch stores of their own, with ids of their own).
std::int64_t job_run_id(const TrainOptions& options, std::int64_t run_id) {
  if (!options.collective) return run_id;
  auto id = at::full({1}, static_cast<double>(run_id), at::TensorOptions().dtype(at::kDouble))
                .to(options.collective->device());
  options.collective->broadcast_in_place({id});
  return static_cast<std::int64_t>(id.item<double>());
}

// What every rank's hooks are told: their rank, and the job's run.
HookContext hook_context(const TrainOptions& options, const std::string& job_store, std::int64_t job_run,
                         std::int64_t log_every) {
  HookContext context;
  context.run_id = job_run;
  context.log_every = log_every;
  if (options.collective) {
    context.rank = options.collective->rank();
    context.world_size = options.collective->world_size();
  }
  const std::string root =
      options.artifact_root.empty() ? directory_beside_store(job_store, kArtifactDirectory) : options.artifact_root;
  context.artifact_dir = run_directory_under(root, context.run_id);
  return context;
}

// [export]: the finished run's model, served as it was evaluated last.
std::string export_finished_run(const Settings& s, TrainingComponents& c, RunStore& store, std::int64_t run_id,
                                std::int64_t steps, const std::string& checkpoint) {
  ServableModel servable{c.model, c.input, c.train_set->info().class_names, s.run.name, {},
                         c.eval_preprocessing->serving_transform()};
  servable.provenance = {{"run_id", std::to_string(run_id)}, {"step", std::to_string(steps)},
                         {"model", s.model_plugin}, {"checkpoint", checkpoint}};
  if (const auto summary = store.find_run(std::to_string(run_id)))
    for (const auto& [name, value] : summary->final_metrics) servable.provenance["metric." + name] = std::to_string(value);
  try {
    const ExportedVersion exported = export_for_serving(servable, s.export_);
    store.record_event(run_id, "export",
                       "serving model version " + std::to_string(exported.version) + " in " + exported.version_dir);
    return exported.version_dir;
  } catch (const std::exception& e) {
    throw Error("training finished but the serving export failed: " + exception_reason(e) +
                (checkpoint.empty() ? std::string()
                                    : "; the weights are in " + checkpoint + ": orchestrate export serving " +
                                          checkpoint + " --out " + s.export_.dir));
  }
}

}  // namespace

TrainOutcome train(const Recipe& recipe, const Registry& registry, RunStore& store, const TrainOptions& options) {
  const auto start = Clock::now();
  const Settings& s = settings_of(recipe);
  const ComputeSetup compute =
      set_up_compute(s, options.collective ? options.collective->environment() : LaunchEnvironment{});
  const bool leader = !options.collective || options.collective->rank() == 0;

  // Checked before anything is written: a resume the recipe cannot continue,
  // and a checkpoint directory that cannot be written.
  std::optional<CheckpointMeta> resume;
  std::vector<std::string> resume_changes;
  if (!options.resume_from.empty()) {
    resume = read_checkpoint_meta(options.resume_from);
    // The run's length may change where the steps done keep their learning rates (resume_length.h).
    const std::string length_problem = length_change_problem(*resume, s, registry);
    resume_changes = check_resume_recipe(*resume, options.resume_from, recipe, registry, compute.world_size,
                                         {{"run.max_steps", length_problem}, {"run.epochs", length_problem}});
    if (leader && !store.find_run(std::to_string(resume->run_id)))
      throw UsageError("--resume " + options.resume_from + ": its run " + std::to_string(resume->run_id) +
                       " is not in " + store.path() + "; pass the run store it was recorded in with --db");
  }
  const std::string checkpoint_dir_root = checkpoint_root(s.checkpoint, store.path());
  if (leader) {
    require_writable_directory(checkpoint_dir_root, "[checkpoint] dir");
    if (!s.export_.dir.empty()) require_writable_directory(s.export_.dir, "[export] dir");
  }
  store.set_flush_interval(std::chrono::duration<double>(s.flush_seconds));

  // Installed before the run row exists: a Ctrl-C while the data loads still
  // ends with the run recorded as interrupted, never left "running".
  const StopSignal stop;
  TrainOutcome outcome;
  const auto run_start = Clock::now();  // the run row's started_at
  SetupTimeline setup(run_start, process_age_seconds());
  if (resume && leader) {
    outcome.run_id = resume->run_id;
    outcome.resumed = true;
    std::string message = "resumed from " + options.resume_from + " at step " + std::to_string(resume->step);
    if (resume->micro_batch) message += " (+" + std::to_string(resume->micro_batch) + " micro-batches)";
    if (!resume_changes.empty()) {
      message += "; recipe changes:";
      for (const auto& change : resume_changes) message += " " + change + ";";
    }
    store.resume_run(outcome.run_id, resume->step, message);
  } else {
    RunRecord record = run_record_of(recipe, s, registry, compute.device);
    record.world_size = compute.world_size;
    outcome.run_id = store.begin_run(record);
  }
  if (leader)
    for (const auto& warning : options.plugin_warnings) store.record_event(outcome.run_id, "plugins", warning);
  try {
    const std::int64_t job_run = job_run_id(options, outcome.run_id);
    const std::string job_store = options.job_store_path.empty() ? store.path() : options.job_store_path;
    const CrashBreadcrumbTarget crash_target(job_store, job_run, compute.rank, compute.world_size);
    // Built once the run is recorded, so a data set that fails to load, or
    // init_from weights that do not fit the model, leave a failed run that
    // says why (and setup_s covers the loading).
    const RunRecorder recorder(store, outcome.run_id);
    RunDataEvents data_events(recorder);  // outlives the datasets, which report into it
    setup.phase_done("the run recorded");
    TrainingComponents components = build_components(s, registry, compute, &data_events);
    setup.phase_done("components (data sets, model, optimizer)");
    store.record_event(outcome.run_id, "threads",
                       "intra_op=" + std::to_string(compute.intra_op_threads) + " data_workers=" + std::to_string(s.run.num_workers) +
                           " cores=" + std::to_string(usable_cores()));
    if (!components.tensor_records.empty() && !resume) {
      store.record_tensors(outcome.run_id, components.tensor_records);
      store.record_event(outcome.run_id, "init_from",
                         (s.checkpoint.init_from.empty() ? std::string("no init_from")
                                                         : "from " + s.checkpoint.init_from) +
                             ": " + transfer_summary(components.tensor_records));
    }
    // Before the input pipeline starts, so its threads do not compete with
    // the peak's measurement; once per run (a resumed run has its figures).
    if (leader && !resume) {
      record_utilisation_baseline(store, outcome.run_id, *components.model, components.input, compute,
                                  s.precision.mode);
      setup.phase_done("FLOPs and the matmul peak");
    }
    Checkpointer checkpointer(s.checkpoint, run_directory_under(checkpoint_dir_root, outcome.run_id), recorder);
    RunHooks hooks(s.hooks, registry, hook_context(options, job_store, job_run, s.run.log_every), recorder);
    TrainingRun run(RunParts{recipe, s, components, recorder, compute, options, stop, checkpointer, hooks},
                    resume ? &*resume : nullptr);
    setup.phase_done("the input pipeline and the run's parts");
    if (!resume) store.record_metric(outcome.run_id, 0, 0, "time/setup_s", seconds_between(run_start, Clock::now()));
    if (leader) store.record_event(outcome.run_id, "setup", setup.text());
    outcome.status = run.run();
    outcome.steps = run.steps();
    outcome.checkpoint = checkpointer.newest();
    if (outcome.status == RunStatus::finished && !s.export_.dir.empty() && leader)
      outcome.exported = export_finished_run(s, components, store, outcome.run_id, outcome.steps, outcome.checkpoint);
    // A rank that crashed got this one stopped (SIGTERM from the launcher):
    // the run failed, of the crash.
    if (leader && outcome.status != RunStatus::finished)
      if (const auto crash = take_peer_crash(store.path(), outcome.run_id, compute.world_size)) throw Error(*crash);
    store.finish_run(outcome.run_id, outcome.status);
    // After the run's end is recorded: its second of measuring is not the
    // run's wall time, which the report accounts for phase by phase.
    if (leader) recheck_peak_after_run(store, outcome.run_id, compute, s.precision.mode);
  } catch (const std::exception& e) {
    fail_run(store, outcome.run_id, e, "training",
             leader ? take_peer_crash(store.path(), outcome.run_id, compute.world_size) : std::nullopt);
  }
  outcome.wall_s = seconds_between(start, Clock::now());
  if (auto summary = store.find_run(std::to_string(outcome.run_id))) outcome.final_metrics = summary->final_metrics;
  return outcome;
}

}  // namespace orchestrate
