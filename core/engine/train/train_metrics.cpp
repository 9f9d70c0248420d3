#include "engine/train/train_metrics.h"

#include <ATen/ATen.h>

#include "engine/train/rank_messages.h"
#include "orchestrate/error.h"

namespace orchestrate {

TrainMetrics::TrainMetrics(const RunRecorder& recorder, const c10::Device& device, Collective* collective,
                           NonFinitePolicy on_nonfinite, double flush_seconds, MoreMetrics more)
    : recorder_(recorder),
      collective_(collective),
      leader_(!collective || collective->rank() == 0),
      on_nonfinite_(on_nonfinite),
      more_(std::move(more)),
      timer_(device),
      clock_(flush_seconds),
      window_(recorder, timer_) {}

// The rows a rank other than 0 wrote go to rank 0 at the next gather; a
// non-finite loss fails the run when on_nonfinite = "stop".
void TrainMetrics::keep(const LogWindow::Summary& summary) {
  if (!leader_) rank_rows_.insert(rank_rows_.end(), summary.rows.begin(), summary.rows.end());
  if (summary.first_nonfinite_step < 0 || on_nonfinite_ != NonFinitePolicy::stop) return;
  const std::string why = "training diverged: loss is " + std::to_string(summary.first_nonfinite_loss) +
                          " at step " + std::to_string(summary.first_nonfinite_step) +
                          "; lower [optimizer] lr, set [run] on_nonfinite = \"skip\", or check the data";
  recorder_.event("nonfinite_loss", why);
  throw Error(why);
}

void TrainMetrics::write_rows() {
  if (window_.empty()) return;
  keep(window_.write_rows());
}

void TrainMetrics::log_point(std::int64_t epoch) {
  if (window_.empty()) return;
  auto summary = window_.flush();
  recent_loss_ = summary.mean_loss;
  latest_["train/loss"] = summary.mean_loss;
  auto& metrics = summary.metrics;  // all of this log point's, in one commit
  const bool diverged = summary.first_nonfinite_step >= 0 && on_nonfinite_ == NonFinitePolicy::stop;
  if (!diverged && more_) more_(metrics);
  recorder_.metrics(summary.last_step, epoch, metrics);
  keep(summary);
}

void TrainMetrics::log_point_with_rank_rows(std::int64_t epoch) {
  log_point(epoch);
  for (const auto& row : gather_step_rows(*collective_, rank_rows_)) recorder_.step(row);
}

StateDict TrainMetrics::state_dict() const { return {{"eval_seconds", at::scalar_tensor(eval_seconds_, at::kDouble)}}; }

void TrainMetrics::load_state_dict(const StateDict& state) {
  if (const auto it = state.find("eval_seconds"); it != state.end()) eval_seconds_ = it->second.item<double>();
}

}  // namespace orchestrate
