#include "engine/train/log_window.h"

#include <ATen/ATen.h>

#include <cmath>

namespace orchestrate {

LogWindow::LogWindow(const RunRecorder& recorder, PhaseTimer& timer)
    : recorder_(recorder), timer_(timer) {}

void LogWindow::count_hits(const at::Tensor& logits, const at::Tensor& labels) {
  const auto k = std::min<std::int64_t>(5, logits.size(1));
  const auto hits = std::get<1>(logits.topk(k, /*dim=*/1)).eq(labels.unsqueeze(1));
  const auto top1 = hits.select(1, 0).sum();
  const auto top5 = hits.any(1).sum();
  top1_ = top1_.defined() ? top1_ + top1 : top1;
  top5_ = top5_.defined() ? top5_ + top5 : top5;
  images_ += labels.size(0);
  has_top5_ = logits.size(1) >= 5;
}

void LogWindow::add_update(const StepTiming& row, const at::Tensor& loss) {
  rows_.push_back(row);
  losses_.push_back(loss);
  last_learning_rate_ = row.learning_rate;
  fill_phase_times(/*wait=*/false);
}

void LogWindow::add_scalar(const std::string& metric, const at::Tensor& value) {
  auto& [sum, count] = scalars_[metric];
  sum = sum.defined() ? sum + value.to(at::kFloat) : value.to(at::kFloat);
  ++count;
}

// Phase times arrive from the timer in step order, one step late on CUDA.
void LogWindow::fill_phase_times(bool wait) {
  for (const auto& times : timer_.take(wait)) {
    if (timed_rows_ >= rows_.size()) break;
    rows_[timed_rows_].compute_s = times.compute_s;
    rows_[timed_rows_].optimizer_s = times.optimizer_s;
    ++timed_rows_;
  }
}

LogWindow::Summary LogWindow::flush() { return take(/*log_point=*/true); }

LogWindow::Summary LogWindow::write_rows() { return take(/*log_point=*/false); }

LogWindow::Summary LogWindow::take(bool log_point) {
  Summary summary;
  if (rows_.empty() && !(log_point && written_rows_ > 0)) return summary;
  fill_phase_times(/*wait=*/true);
  // One read for the whole window: losses, then the two hit counts and the
  // other scalars at a log point. Every value is converted to double, exactly.
  std::vector<at::Tensor> values;
  for (const auto& loss : losses_) values.push_back(loss.to(at::kDouble));
  const bool hits = log_point && images_ > 0;
  if (hits) {
    values.push_back(top1_.to(at::kDouble));
    values.push_back(top5_.to(at::kDouble));
  }
  if (log_point)
    for (const auto& [metric, sum_and_count] : scalars_) values.push_back(sum_and_count.first.to(at::kDouble));
  at::Tensor host;
  if (!values.empty()) host = at::stack(values).to(at::kCPU).contiguous();
  const double* read = host.defined() ? host.data_ptr<double>() : nullptr;
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    rows_[i].loss = read[i];
    written_loss_sum_ += read[i];
    if (!std::isfinite(read[i]) && summary.first_nonfinite_step < 0) {
      summary.first_nonfinite_step = rows_[i].step;
      summary.first_nonfinite_loss = read[i];
    }
    recorder_.step(rows_[i]);
  }
  written_rows_ += static_cast<std::int64_t>(rows_.size());
  if (!rows_.empty()) last_step_ = rows_.back().step;
  const std::size_t row_count = rows_.size();
  summary.rows = std::move(rows_);
  rows_.clear();
  losses_.clear();
  timed_rows_ = 0;
  summary.last_step = last_step_;
  if (!log_point) return summary;
  summary.mean_loss = written_loss_sum_ / static_cast<double>(written_rows_);
  summary.metrics.emplace_back("train/loss", summary.mean_loss);
  // The lr of the log point's update, as TensorBoard's export has it: a
  // metric like the others, for show, plot and compare.
  summary.metrics.emplace_back("train/learning_rate", last_learning_rate_);
  if (hits) {
    const double* hit_counts = read + row_count;
    summary.metrics.emplace_back("train/top1", hit_counts[0] / static_cast<double>(images_));
    if (has_top5_) summary.metrics.emplace_back("train/top5", hit_counts[1] / static_cast<double>(images_));
  }
  const double* scalar = read ? read + row_count + (hits ? 2 : 0) : nullptr;
  for (const auto& [metric, sum_and_count] : scalars_)
    summary.metrics.emplace_back(metric, *scalar++ / static_cast<double>(sum_and_count.second));
  scalars_.clear();
  top1_ = top5_ = at::Tensor();
  images_ = 0;
  written_rows_ = 0;
  written_loss_sum_ = 0;
  return summary;
}

}  // namespace orchestrate
