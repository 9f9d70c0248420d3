#include "analysis/bottleneck_verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "analysis/table_format.h"
#include "store/host_peaks.h"
#include "store/run_liveness.h"

namespace orchestrate {
namespace {

// "2", "0.5": a recipe value as a user writes it.
std::string plain(double value) {
  return value == std::floor(value) && std::abs(value) < 1e15 ? std::to_string(static_cast<long long>(value))
                                                               : fixed(value, 3);
}

void input_fixes(const ThroughputRow& row, const RunFacts& facts, std::vector<std::string>& fixes) {
  const double workers = facts.number("run.num_workers");
  if (facts.cores > 0 && workers < facts.cores)
    fixes.push_back("[run] num_workers = " + std::to_string(facts.cores) + " (now " + plain(workers) +
                    "; the host has " + std::to_string(facts.cores) + " cores)");
  if (facts.number("run.cache_mb") <= 0)
    fixes.push_back("[run] cache_mb = 4096 (now 0: every epoch reads and decodes every image again; size it to the "
                    "decoded training set, within the host's memory)");
  if (row.median_step_s > 0 && row.p95_step_s > 2 * row.median_step_s) {
    const double prefetch = facts.number("run.prefetch_batches");
    fixes.push_back("[run] prefetch_batches = " + plain(2 * prefetch) + " (now " + plain(prefetch) + "; steps vary: p95 " +
                    fixed(row.p95_step_s, 3) + " s against a median of " + fixed(row.median_step_s, 3) + " s)");
  }
  fixes.push_back("smaller stored images: scripts/convert_dataset shrink --max-side 320 (decoding is most of the input's work)");
}

void communication_fixes(const ThroughputRow& row, const RunFacts& facts, std::vector<std::string>& fixes) {
  // Back to the defaults, where the run went below them.
  const double bucket = facts.number("distributed.bucket_size_mb");
  const double default_bucket = facts.defaults->number("distributed.bucket_size_mb");
  if (bucket < default_bucket)
    fixes.push_back("[distributed] bucket_size_mb = " + plain(default_bucket) + " (now " + plain(bucket) +
                    ": each bucket is an all-reduce of its own, and small ones pay the latency many times)");
  if (facts.param("gradient_compression.plugin") == "none")
    fixes.push_back("[gradient_compression] plugin = \"dgc\" (now none; " + fixed(row.bytes_per_step / 1048576.0, 1) +
                    " MiB sent per update)");
  const double batch = facts.number("run.batch_size");
  if (batch > 0)
    fixes.push_back("[run] batch_size = " + plain(2 * batch) + " (now " + plain(batch) +
                    ": half the updates per image, each sending the same bytes; scale the learning rate with it)");
}

// Evaluating less often, when that would help: a run that evaluates only
// once, at its end (one epoch, every_epochs at least its epochs, or capped
// by max_steps), does so whatever every_epochs says; a 100-step run had been
// told to set every_epochs = 2.
std::string evaluation_fix(const RunFacts& facts, double eval_share) {
  const double every = facts.number("eval.every_epochs");
  const double epochs = facts.number("run.epochs");
  const bool capped = facts.number("run.max_steps") > 0;
  if (capped || every <= 0 || epochs <= every)
    return "[eval] enabled = false for a run that times training (now true; evaluation took " + percent(eval_share) +
           " of the training time, but this run evaluates once, at its end, whatever every_epochs says: a longer "
           "run spends a smaller share on it)";
  return "[eval] every_epochs = " + plain(std::max(2.0, 2 * every)) + " (now " + plain(every) + "; evaluation took " +
         percent(eval_share) + " of the training time)";
}

void overhead_fixes(const ThroughputRow& row, const RunFacts& facts, double eval_share, double between_share,
                    std::vector<std::string>& fixes) {
  if (eval_share >= between_share) fixes.push_back(evaluation_fix(facts, eval_share));
  const double log_every = facts.number("run.log_every");
  const double default_log_every = facts.defaults->number("run.log_every");
  if (log_every < default_log_every)
    fixes.push_back("[run] log_every = " + plain(default_log_every) + " (now " + plain(log_every) + ")");
  const double checkpoint_steps = facts.number("checkpoint.every_steps");
  if (checkpoint_steps > 0)
    fixes.push_back("[checkpoint] every_steps = " + plain(2 * checkpoint_steps) + " (now " + plain(checkpoint_steps) +
                    "; or save_interval_secs)");
  if (fixes.empty())
    fixes.push_back(evaluation_fix(facts, eval_share) + "; the steps' time outside their phases was " +
                    percent(between_share));
  (void)row;
}

void compute_fixes(const ThroughputRow& row, const RunFacts& facts, std::vector<std::string>& fixes) {
  const bool cuda = row.device.rfind("cuda", 0) == 0;
  const std::string precision = facts.param("precision.mode");
  if (cuda && precision == "fp32")
    fixes.push_back("[precision] mode = \"bf16\" (now fp32: the tensor cores run bf16 and fp16 several times faster)");
  if (cuda && facts.param("model.memory_format") == "contiguous")
    fixes.push_back("[model] memory_format = \"auto\" (now contiguous: cuDNN's convolutions are fastest channels-last)");
  // The ranks of a job on one host share its cores (compute_setup.cpp).
  const double threads = facts.number("run.threads");
  const int cores_per_rank = facts.cores / std::max(1, row.workers);
  if (!cuda && threads > 0 && threads < cores_per_rank)
    fixes.push_back("[run] threads = 0 (now " + plain(threads) + ": one intra-op thread per core, " +
                    std::to_string(cores_per_rank) + " per rank here)");
  if (!cuda && row.peak_flops_per_s > 0) {
    const auto fastest = std::max_element(facts.other_precision_peaks.begin(), facts.other_precision_peaks.end(),
                                          [](const auto& a, const auto& b) { return a.second < b.second; });
    if (fastest != facts.other_precision_peaks.end() &&
        fastest->second >= kFasterPrecisionPeakRatio * row.peak_flops_per_s) {
      fixes.push_back("[precision] mode = \"" + fastest->first + "\" (now " + precision + ": this CPU's " +
                      fastest->first + " matrix products reach " + flops_text(fastest->second, "/s") + ", " +
                      fixed(fastest->second / row.peak_flops_per_s, 1) + " times " + precision + "'s " +
                      flops_text(row.peak_flops_per_s, "/s") + ")");
    }
  }
  if (fixes.empty())
    fixes.push_back(cuda ? "none in the recipe: the model's arithmetic is the limit (a larger [run] batch_size may "
                           "use the device better)"
                         : "none in the recipe: the model's arithmetic is the limit on this CPU ([run] device = "
                           "\"cuda\" on a GPU host)");
}

// Fewer, larger kernels: the same launches do more work. ([run] cuda_graph
// and data_on_device, the other fixes, join this once a GPU has measured
// them: until then they are off by default and not advised.)
void launch_fixes(const RunFacts& facts, std::vector<std::string>& fixes) {
  const double batch = facts.number("run.batch_size");
  fixes.push_back("[run] batch_size = " + plain(4 * batch) + " (now " + plain(batch) +
                  ": four times the images for the same kernel launches; scale the learning rate with it)");
}

bool launch_bound(const ThroughputRow& row) {
  const bool cuda = row.device.rfind("cuda", 0) == 0;
  if (cuda && row.device_busy_share >= 0) return row.device_busy_share < kLaunchBoundBusyShare;
  return cuda && row.mfu() > 0 && row.mfu() < kLaunchBoundMfu && row.median_step_s > 0 &&
         row.median_step_s < kLaunchBoundStepS;
}

// "; the GPU ran kernels 97 % of the time (NVML)", where the run measured it.
std::string device_busy_phrase(const ThroughputRow& row) {
  return row.device_busy_share >= 0 ? "; the GPU ran kernels " + percent(row.device_busy_share) +
                                          " of the training steps' time (NVML)"
                                    : "";
}

}  // namespace

std::string RunFacts::param(const std::string& key) const {
  const auto it = params.find(key);
  if (it == params.end()) return defaults->stored_text(key);
  std::string value = it->second;
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
  return value;
}

double RunFacts::number(const std::string& key) const {
  const std::string text = param(key);
  try {
    std::size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return defaults->number(key);
}

RunFacts run_facts(const RunStore& store, const RunSummary& run, const CoreDefaults& defaults) {
  RunFacts facts;
  facts.defaults = &defaults;
  const RunDetails details = store.run_details(run);
  facts.params = defaults.complete(details.record.params);
  const auto smoke = run.tags.find("smoke");
  facts.smoke = smoke != run.tags.end() && smoke->second == "true";
  // "intra_op=2 data_workers=2 cores=2", recorded by the trainer at setup.
  for (const auto& event : store.events(run.id)) {
    if (event.kind != "threads") continue;
    const auto at = event.message.find("cores=");
    if (at != std::string::npos) facts.cores = std::atoi(event.message.c_str() + at + 6);
  }
  // The run's own peak names its device and threads among the host's; a
  // peak measured again since then names none, and nothing is compared.
  const auto own = run.final_metrics.find(kPeakFlopsMetric);
  if (own == run.final_metrics.end()) return facts;
  // The run store keeps the peaks its runs took; the host's cache keeps
  // every one measured on this host, so a run read where it ran sees all.
  auto peaks = store.device_peaks(run.host);
  if (run.host == this_host_name())
    for (auto& peak : read_host_peaks()) peaks.push_back(std::move(peak));
  const std::string precision = facts.param("precision.mode");
  const auto match = std::find_if(peaks.begin(), peaks.end(), [&](const DevicePeak& peak) {
    return peak.precision == precision && peak.flops_per_s == own->second;
  });
  if (match == peaks.end()) return facts;
  for (const auto& peak : peaks)
    if (peak.device == match->device && peak.threads == match->threads && peak.precision != match->precision)
      facts.other_precision_peaks[peak.precision] = peak.flops_per_s;
  return facts;
}

Verdict bottleneck_verdict(const ThroughputRow& row, const RunFacts& facts) {
  Verdict verdict;
  if (row.steps == 0 || row.train_s <= 0) return verdict;
  if (facts.smoke) {
    verdict.not_judged =
        "a smoke run (two updates of tiny batches on mock data, one thread, fp32 on a CPU) shows that the recipe "
        "runs, not how fast; run it without --smoke for a verdict";
    return verdict;
  }
  if (row.warmup_steps == 0) {
    verdict.not_judged = std::to_string(row.steps) + " steps, too few to leave out the first, whose set-up work " +
                         "(autotuning, allocation, the pipeline filling) would pass for the step's own; a verdict " +
                         "needs " + std::to_string(kMinStepsToDropWarmUp) + " steps or more";
    return verdict;
  }
  const double training = row.train_s + row.eval_s;
  const double steps = row.train_s / training;
  const double in_phases = row.data_wait_share + row.compute_share + row.sync_share + row.optimizer_share;
  const double eval_share = row.eval_s / training;
  const double between_share = std::max(0.0, 1 - in_phases) * steps;
  verdict.input_share = row.data_wait_share * steps;
  verdict.communication_share = row.sync_share * steps;
  verdict.overhead_share = between_share + eval_share;
  verdict.compute_share = (row.compute_share + row.optimizer_share) * steps;

  const std::vector<std::pair<std::string, double>> candidates{
      {"input", verdict.input_share}, {"communication", verdict.communication_share}, {"overhead", verdict.overhead_share}};
  const auto largest = std::max_element(candidates.begin(), candidates.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
  verdict.limit = largest->second >= kLimitingShare ? largest->first : launch_bound(row) ? "launch" : "compute";

  std::ostringstream evidence;
  if (verdict.limit == "input") {
    evidence << "the model waited for data " << percent(verdict.input_share) << " of the training time ("
             << plain(facts.number("run.num_workers")) << " pipeline threads"
             << (facts.cores > 0 ? ", " + std::to_string(facts.cores) + " cores" : std::string()) << ")";
    input_fixes(row, facts, verdict.fixes);
  } else if (verdict.limit == "communication") {
    evidence << "gradient sync took " << percent(verdict.communication_share) << " of the training time, "
             << fixed(row.bytes_per_step / 1048576.0, 2) << " MiB sent per update";
    communication_fixes(row, facts, verdict.fixes);
  } else if (verdict.limit == "overhead") {
    evidence << "evaluation took " << percent(eval_share) << " and the steps' time outside their phases (logging, "
             << "checkpoints) " << percent(between_share) << " of the training time";
    overhead_fixes(row, facts, eval_share, between_share, verdict.fixes);
  } else if (verdict.limit == "launch") {
    if (row.device_busy_share >= 0) {
      evidence << "the GPU ran kernels only " << percent(row.device_busy_share)
               << " of the training steps' time (NVML)";
      if (row.mfu() > 0) evidence << ", at a model FLOPs utilisation of " << fixed(100 * row.mfu(), 2) << " %";
    } else {
      // The arithmetic of a median step at the measured peak, against the step.
      evidence << "at the measured " << fixed(row.peak_flops_per_s / 1e12, 1)
               << " TFLOP/s peak the step's arithmetic would take " << fixed(row.mfu() * row.median_step_s * 1e6, 1)
               << " us of its " << fixed(row.median_step_s * 1e3, 2) << " ms (model FLOPs utilisation "
               << fixed(100 * row.mfu(), 2) << " %)";
    }
    evidence << ": the GPU waits on kernel launches and the host, not on arithmetic; data wait "
             << percent(verdict.input_share) << ", sync " << percent(verdict.communication_share);
    launch_fixes(facts, verdict.fixes);
  } else {
    evidence << "forward, backward and optimizer took " << percent(verdict.compute_share)
             << " of the training time; data wait " << percent(verdict.input_share) << ", sync "
             << percent(verdict.communication_share) << ", overhead " << percent(verdict.overhead_share);
    if (row.mfu() > 0)
      evidence << "; model FLOPs utilisation " << fixed(100 * row.mfu(), 1) << " % of the measured "
               << fixed(row.peak_flops_per_s / 1e9, 1) << " GFLOP/s peak"
               << (row.devices() > 1 ? " of each of " + std::to_string(row.devices()) + " devices" : std::string());
    evidence << device_busy_phrase(row);
    compute_fixes(row, facts, verdict.fixes);
  }
  verdict.evidence = evidence.str();
  return verdict;
}

std::optional<Straggler> find_straggler(const std::vector<ThroughputRow>& ranks) {
  if (ranks.size() < 2) return std::nullopt;
  std::vector<double> busy;
  for (const auto& row : ranks) busy.push_back(row.median_step_s * std::max(0.0, 1 - row.sync_share));
  const auto slowest = static_cast<std::size_t>(std::max_element(busy.begin(), busy.end()) - busy.begin());
  std::vector<double> others;
  for (std::size_t i = 0; i < busy.size(); ++i)
    if (i != slowest) others.push_back(busy[i]);
  const double others_busy = median(others);
  if (others_busy <= 0 || busy[slowest] <= 1.1 * others_busy) return std::nullopt;
  return Straggler{ranks[slowest].rank, busy[slowest], others_busy};
}

void add_verdict_columns(Table& table, const std::vector<ThroughputRow>& rows, const std::vector<Verdict>& verdicts) {
  table.headers.insert(table.headers.end(), {"limit", "evidence", "fixes"});
  table.hidden_for_people.insert({"evidence", "fixes"});  // people read them under the table (verdict_text)
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const bool job = rows[i].rank == "job" && !verdicts[i].limit.empty();
    const bool not_judged = rows[i].rank == "job" && !verdicts[i].not_judged.empty();
    table.rows[i].push_back(job ? text_cell(verdicts[i].limit) : Cell());
    table.rows[i].push_back(job          ? text_cell(verdicts[i].evidence)
                            : not_judged ? text_cell("not judged: " + verdicts[i].not_judged)
                                         : Cell());
    table.rows[i].push_back(job ? list_cell(verdicts[i].fixes) : Cell());
  }
}

std::string verdict_text(const std::vector<ThroughputRow>& rows, const std::vector<Verdict>& verdicts,
                         const std::map<std::int64_t, Straggler>& stragglers) {
  std::ostringstream out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].rank != "job") continue;
    out << "\nrun " << rows[i].run_id << " (" << rows[i].name << "): ";
    if (!verdicts[i].not_judged.empty()) {
      out << "not judged: " << verdicts[i].not_judged << "\n";
      continue;
    }
    if (verdicts[i].limit.empty()) {
      out << "no measured steps, no verdict\n";
      continue;
    }
    out << verdicts[i].limit << "-bound: " << verdicts[i].evidence << "\n";
    for (const auto& fix : verdicts[i].fixes) out << "  try: " << fix << "\n";
    if (const auto it = stragglers.find(rows[i].run_id); it != stragglers.end())
      out << "  straggler: rank " << (it->second.rank == "job" ? "0" : it->second.rank) << ", busy "
          << fixed(it->second.busy_s, 4) << " s a step against " << fixed(it->second.others_busy_s, 4)
          << " s for the others (the others wait for it in their sync)\n";
  }
  return out.str();
}

}  // namespace orchestrate
