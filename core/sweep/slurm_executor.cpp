#include "sweep/slurm_executor.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "orchestrate/error.h"
#include "orchestrate/shell_word.h"
#include "sweep/slurm_commands.h"

namespace orchestrate::sweep {

namespace fs = std::filesystem;

namespace {

// A task gone from the queue this many polls in a row, with no exit code
// written, is lost (a shared file system may show the file a moment late).
constexpr int kPollsBeforeLost = 3;

// The batch script every task runs. Its trial runs in the background so
// that this shell can take scancel --batch's SIGINT and pass it on once
// (a second SIGINT would end a run before it saves); SIGTERM (a time limit,
// a plain scancel) reaches the trial itself from Slurm, and this shell
// outlives it to write the exit code. A non-interactive shell starts a
// background command with SIGINT ignored; the engine sets its own handler.
std::string batch_script(const std::string& array_dir) {
  return "#!/bin/bash\n"
         "# One task of an orchestrate sweep's job array (written by orchestrate sweep).\n"
         "dir=" + shell_word(array_dir) + "\n"
         "task=$SLURM_ARRAY_TASK_ID\n"
         "export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1}\n"
         "mapfile -d '' -t argv < \"$dir/task-$task.args\" || exit 1\n"
         "\"${argv[@]:2}\" < /dev/null > \"${argv[0]}\" 2> \"${argv[1]}\" &\n"
         "trial=$!\n"
         "trap 'kill -INT \"$trial\" 2>/dev/null' INT\n"
         "trap ':' TERM\n"
         "while :; do\n"
         "  wait \"$trial\"\n"
         "  code=$?\n"
         "  kill -0 \"$trial\" 2>/dev/null || break\n"
         "done\n"
         "echo \"$code\" > \"$dir/task-$task.exit.part\" &&\n"
         "  mv \"$dir/task-$task.exit.part\" \"$dir/task-$task.exit\"\n";
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  out.close();
  if (!out) throw Error("sweep: cannot write " + path.string() + " (is the sweep's directory writable?)");
}

std::optional<int> exit_code_in(const fs::path& path) {
  std::ifstream in(path);
  int code = 0;
  if (in >> code) return code;
  return std::nullopt;
}

// Each task of the array still in the queue and its state (PD, R, CG...);
// nullopt when squeue could not say (slurmctld busy), so that no task is
// taken for gone on a failed poll.
std::optional<std::map<std::size_t, std::string>> queued_tasks(const std::string& job_id) {
  const CommandOutput queue = run_slurm_command("squeue", {"-h", "-r", "-j", job_id, "-o", "%K %t"});
  std::map<std::size_t, std::string> tasks;
  // A job purged from slurmctld's memory is no job id at all to squeue.
  if (queue.exit_code != 0) {
    if (queue.err.find("Invalid job id") != std::string::npos) return tasks;
    return std::nullopt;
  }
  std::istringstream lines(queue.out);
  std::string task, state;
  while (lines >> task >> state)
    if (task.find_first_not_of("0123456789") == std::string::npos) tasks[std::stoul(task)] = state;
  return tasks;
}

std::string first_free_array_dir(const std::string& work_dir) {
  for (int k = 1;; ++k) {
    const fs::path dir = fs::path(work_dir) / ("array-" + std::to_string(k));
    if (!fs::exists(dir)) return dir.string();
  }
}

}  // namespace

std::string SlurmExecutor::submit(const std::vector<Job>& jobs, const std::string& array_dir) {
  fs::create_directories(array_dir);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    std::string argv;  // NUL-separated, as mapfile -d '' reads it back: any byte but NUL survives
    for (const std::string& word : {jobs[i].stdout_path, jobs[i].stderr_path, jobs[i].program})
      argv += word + '\0';
    for (const std::string& word : jobs[i].arguments) argv += word + '\0';
    write_file(fs::path(array_dir) / ("task-" + std::to_string(i) + ".args"), argv);
  }
  const fs::path script = fs::path(array_dir) / "array.sh";
  write_file(script, batch_script(array_dir));
  std::vector<std::string> arguments{
      "--parsable",
      "--job-name=" + shape_.name,
      "--array=0-" + std::to_string(jobs.size() - 1) + "%" + std::to_string(shape_.concurrency),
      "--cpus-per-task=" + std::to_string(shape_.cpus_per_task),
      "--output=" + (fs::path(array_dir) / "slurm-%A_%a.out").string()};
  if (shape_.gpus_per_task > 0) arguments.push_back("--gres=gpu:" + std::to_string(shape_.gpus_per_task));
  if (!shape_.settings.partition.empty()) arguments.push_back("--partition=" + shape_.settings.partition);
  if (!shape_.settings.time.empty()) arguments.push_back("--time=" + shape_.settings.time);
  arguments.insert(arguments.end(), shape_.settings.sbatch.begin(), shape_.settings.sbatch.end());
  arguments.push_back(script.string());
  const CommandOutput sbatch = run_slurm_command("sbatch", arguments);
  // --parsable prints "<job id>" or "<job id>;<cluster>".
  const std::string job_id = sbatch.out.substr(0, sbatch.out.find_first_of(";\n"));
  if (sbatch.exit_code != 0 || job_id.empty() || job_id.find_first_not_of("0123456789") != std::string::npos) {
    const std::string said = last_line(sbatch.err);
    throw Error("sweep: sbatch refused the job array: " +
                (said.empty() ? "exit code " + std::to_string(sbatch.exit_code) : said) +
                " (check [sweep.slurm] in the spec, and that this host submits at all: "
                "sbatch --test-only --wrap true)");
  }
  write_file(fs::path(shape_.work_dir) / "job-id", job_id + "\n");
  return job_id;
}

void SlurmExecutor::stop_array(const std::string& job_id) const {
  run_slurm_command("scancel", {"--state=PENDING", job_id});  // never to start
  run_slurm_command("scancel", {"--batch", "--signal=INT", job_id});
}

void SlurmExecutor::run(const std::vector<Job>& jobs, const std::function<void(const Finished&)>& on_finished,
                        const std::function<void(int running)>& on_tick, const std::function<bool()>& stop) {
  if (jobs.empty() || stop()) return;
  const std::string array_dir = first_free_array_dir(shape_.work_dir);
  const std::string job_id = submit(jobs, array_dir);
  std::cerr << "sweep: Slurm job array " << job_id << " (" << jobs.size() << " tasks, " << shape_.concurrency
            << " at a time); its output in " << array_dir << "\n";
  enum class TaskState { queued, running, ended };
  struct Task {
    TaskState state = TaskState::queued;
    std::chrono::steady_clock::time_point started;
    int polls_gone = 0;
    bool interrupted = false;
  };
  std::vector<Task> tasks(jobs.size());
  const auto submitted = std::chrono::steady_clock::now();
  for (Task& task : tasks) task.started = submitted;
  bool passed_on = false;
  for (;;) {
    const bool stopping = stop();
    if (stopping && !passed_on) {
      passed_on = true;
      stop_array(job_id);
    }
    for (std::size_t i = 0; i < tasks.size(); ++i)
      if (tasks[i].state == TaskState::running && !tasks[i].interrupted && to_interrupt_.count(jobs[i].trial)) {
        run_slurm_command("scancel", {"--batch", "--signal=INT", job_id + "_" + std::to_string(i)});
        tasks[i].interrupted = true;
      }
    const auto queue = queued_tasks(job_id);
    int running = 0, left = 0;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      Task& task = tasks[i];
      if (task.state == TaskState::ended) continue;
      const fs::path exit_file = fs::path(array_dir) / ("task-" + std::to_string(i) + ".exit");
      std::optional<int> code = exit_code_in(exit_file);
      bool lost = false;
      if (!code && queue) {
        const auto entry = queue->find(i);
        if (entry != queue->end()) {
          task.polls_gone = 0;
          if (task.state == TaskState::queued && (entry->second == "R" || entry->second == "CG")) {
            task.state = TaskState::running;
            task.started = std::chrono::steady_clock::now();
          }
        } else if (++task.polls_gone >= kPollsBeforeLost) {
          lost = true;
        }
      }
      if (code || lost) {
        const bool started = task.state == TaskState::running || code.has_value();
        task.state = TaskState::ended;
        if (!started && stopping) continue;  // cancelled before it started: it stays to run
        if (lost) {
          std::ofstream(jobs[i].stderr_path, std::ios::app)
              << "orchestrate: error: Slurm task " << job_id << "_" << i
              << " left the queue without an exit code (cancelled, past its time limit, or its node failed); "
                 "see " << (fs::path(array_dir) / ("slurm-" + job_id + "_" + std::to_string(i) + ".out")).string()
              << "\n";
        }
        Finished finished{&jobs[i], code.value_or(-1),
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - task.started).count()};
        for (const Task& other : tasks) finished.still_running += other.state == TaskState::running;
        on_finished(finished);
        continue;
      }
      ++left;
      running += task.state == TaskState::running;
    }
    if (left == 0) return;
    on_tick(running);
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

void SlurmExecutor::interrupt_orphans() {
  std::ifstream in(fs::path(shape_.work_dir) / "job-id");
  std::string job_id;
  if (!(in >> job_id)) return;
  auto queue = queued_tasks(job_id);
  if (!queue || queue->empty()) return;
  std::cerr << "sweep: the last controller's Slurm job array " << job_id
            << " still runs; its pending tasks are cancelled and its running trials sent SIGINT to save\n";
  stop_array(job_id);
  const auto started = std::chrono::steady_clock::now();
  while (!queue || !queue->empty()) {
    if (std::chrono::steady_clock::now() - started > kWaitForOrphans)
      throw UsageError("sweep: the last controller's Slurm job array " + job_id + " is still queued after " +
                       std::to_string(kWaitForOrphans.count()) + " s; end it (scancel " + job_id +
                       "), then --resume again");
    std::this_thread::sleep_for(std::chrono::seconds(1));
    queue = queued_tasks(job_id);
  }
}

}  // namespace orchestrate::sweep
