#include "analysis/run_summary.h"

#include <sstream>

#include "analysis/table_format.h"  // fixed(), percent()

namespace orchestrate {
namespace {

// "label       text", the text folded under itself.
std::string field(const std::string& label, const std::string& text) {
  constexpr std::size_t kLabelWidth = 12;
  const std::string padded = label + std::string(kLabelWidth - std::min(label.size(), kLabelWidth - 1), ' ');
  return padded + fold(text, kSummaryColumns - padded.size(), std::string(padded.size(), ' ')) + "\n";
}

}  // namespace

// Folding by hand: a dozen lines, and no library the project uses does it.
std::string fold(const std::string& text, std::size_t width, const std::string& indent) {
  std::istringstream words(text);
  std::string out, line;
  for (std::string word; words >> word;) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n" + indent;
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

std::string run_summary(const ThroughputRow& row, const Verdict& verdict, const std::string& report_command) {
  std::string out;
  if (row.steps == 0) return field("throughput", "no measured steps (the first " + std::to_string(row.warmup_steps) +
                                                     " are warm-up)") +
                             field("full report", report_command);
  out += field("throughput", fixed(row.images_per_s, 0) + " img/s (median step " + fixed(row.median_step_s, 4) +
                                 " s, p95 " + fixed(row.p95_step_s, 4) + " s, " + std::to_string(row.steps) +
                                 " steps after " + std::to_string(row.warmup_steps) + " warm-up)");
  out += field("wall time", fixed(row.wall_s, 1) + " s: setup " + fixed(row.setup_s, 1) + " s, training " +
                                fixed(row.train_s, 1) + " s, evaluation " + fixed(row.eval_s, 1) + " s");
  std::string phases = "data wait " + percent(row.data_wait_share) + ", forward and backward " +
                       percent(row.compute_share) + ", optimizer " + percent(row.optimizer_share);
  if (row.workers > 1 || row.sync_share > 0) phases += ", gradient sync " + percent(row.sync_share);
  out += field("step time", phases);
  if (row.mfu() > 0) {
    out += field("MFU", fixed(100 * row.mfu(), 1) + " % of the measured peak (" +
                            fixed(row.achieved_flops_per_s() / 1e9, 1) + " of " +
                            (row.devices() > 1 ? std::to_string(row.devices()) + " x " : std::string()) +
                            fixed(row.peak_flops_per_s / 1e9, 1) + " GFLOP/s)");
  }
  if (!verdict.not_judged.empty()) out += field("limit", "not judged: " + verdict.not_judged);
  if (!verdict.limit.empty()) {
    out += field("limit", verdict.limit + "-bound: " + verdict.evidence);
    for (const auto& fix : verdict.fixes) out += field("try", fix);
  }
  out += field("full report", report_command);
  return out;
}

}  // namespace orchestrate
