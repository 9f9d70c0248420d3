#include "log_window.h"

#include <ATen/ATen.h>

#include <cmath>

namespace orchestrate {

LogWindow::LogWindow(RunStore& store, std::int64_t run_id, PhaseTimer& timer)
    : store_(store), run_id_(run_id), timer_(timer) {}

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

LogWindow::Summary LogWindow::flush(std::int64_t epoch) {
  Summary summary;
  if (rows_.empty()) return summary;
  fill_phase_times(/*wait=*/true);
  // One read for the whole window: losses, then the two hit counts.
  std::vector<at::Tensor> values = losses_;
  if (images_ > 0) {
    values.push_back(top1_.to(at::kDouble));
    values.push_back(top5_.to(at::kDouble));
  }
  for (const auto& [metric, sum_and_count] : scalars_) values.push_back(sum_and_count.first.to(values.front().dtype()));
  const auto host = at::stack(values).to(at::kCPU, at::kDouble).contiguous();
  const double* read = host.data_ptr<double>();
  double sum = 0;
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    rows_[i].loss = read[i];
    sum += read[i];
    if (!std::isfinite(read[i]) && summary.first_nonfinite_step < 0) {
      summary.first_nonfinite_step = rows_[i].step;
      summary.first_nonfinite_loss = read[i];
    }
    store_.record_step(run_id_, rows_[i]);
  }
  summary.last_step = rows_.back().step;
  summary.mean_loss = sum / static_cast<double>(rows_.size());
  summary.metrics.emplace_back("train/loss", summary.mean_loss);
  if (images_ > 0) {
    const double* hits = read + rows_.size();
    summary.metrics.emplace_back("train/top1", hits[0] / static_cast<double>(images_));
    if (has_top5_) summary.metrics.emplace_back("train/top5", hits[1] / static_cast<double>(images_));
  }
  const double* scalar = read + rows_.size() + (images_ > 0 ? 2 : 0);
  for (const auto& [metric, sum_and_count] : scalars_)
    summary.metrics.emplace_back(metric, *scalar++ / static_cast<double>(sum_and_count.second));
  summary.rows = std::move(rows_);
  rows_.clear();
  losses_.clear();
  scalars_.clear();
  timed_rows_ = 0;
  top1_ = top5_ = at::Tensor();
  images_ = 0;
  return summary;
}

}  // namespace orchestrate
