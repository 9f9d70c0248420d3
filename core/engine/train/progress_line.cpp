#include "engine/train/progress_line.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "orchestrate/error.h"

namespace orchestrate {

ProgressMode parse_progress_mode(const std::string& text) {
  if (text == "auto") return ProgressMode::auto_detect;
  if (text == "always") return ProgressMode::always;
  if (text == "never") return ProgressMode::never;
  throw UsageError("progress mode '" + text + "': expected auto, always or never");
}

namespace {
// The ETA is the steps left times a smoothed step time: an exponential moving
// average over the half-second windows, weight kSmoothing for the newest.
// The first kWarmupSteps steps of the process (allocator, cuDNN autotuning, the input
// pipeline filling) are left out, and a window enters at most kMostChange
// times the average, so one stall moves the ETA a little, not 13:28 to 33:47,
// while a lasting change of pace takes over within a few seconds.
constexpr double kSmoothing = 0.2;
constexpr std::int64_t kWarmupSteps = 10;
constexpr double kMostChange = 4;
}  // namespace

ProgressLine::ProgressLine(std::ostream& out, ProgressMode mode, std::int64_t log_every, bool out_is_terminal,
                           std::function<Clock::time_point()> now)
    : out_(out),
      enabled_(mode != ProgressMode::never),
      // always: redrawn in place even off a terminal (a log viewer that
      // renders carriage returns, `script`, an IDE console).
      redraw_(out_is_terminal || mode == ProgressMode::always),
      log_every_(log_every),
      now_(std::move(now)),
      last_draw_(now_()),
      window_start_(last_draw_) {}

std::string ProgressLine::format_duration(double seconds) {
  if (!(seconds >= 0) || seconds > 1e8) return "?";
  const auto total = static_cast<std::int64_t>(seconds + 0.5);
  const auto h = total / 3600, m = (total / 60) % 60, s = total % 60;
  std::ostringstream out;
  out << std::setfill('0');
  if (h > 0) out << h << ":" << std::setw(2) << m << ":" << std::setw(2) << s;
  else out << m << ":" << std::setw(2) << s;
  return out.str();
}

std::string ProgressLine::render(const ProgressState& s) const {
  std::ostringstream line;
  line << "epoch " << s.epoch << "/" << s.epochs << "  step " << s.step << "/" << s.total_steps << "  loss ";
  // Before the first log point no loss has been read from the device: a dash, not a made-up 0.
  if (s.loss) line << std::fixed << std::setprecision(4) << *s.loss;
  else line << "-";
  line << "  lr " << std::defaultfloat << std::setprecision(3)
       << s.learning_rate << "  " << std::fixed << std::setprecision(0) << images_per_s_ << " img/s  ETA "
       << format_duration((smoothed_step_s_ > 0 ? smoothed_step_s_ : seconds_per_step_) *
                          static_cast<double>(s.total_steps - s.step));
  return line.str();
}

void ProgressLine::draw(const std::string& line) {
  if (redraw_) {
    out_ << "\r\033[K" << line << std::flush;
    line_open_ = true;
  } else {
    out_ << line << "\n" << std::flush;
  }
}

void ProgressLine::update(const ProgressState& state, std::int64_t images) {
  window_images_ += images;
  ++window_steps_;
  ++steps_seen_;
  const auto now = now_();
  const double window_s = std::chrono::duration<double>(now - window_start_).count();
  // Rates over a window of at least half a second, so the figures do not flicker.
  if (window_s >= 0.5) {
    images_per_s_ = window_images_ / window_s;
    seconds_per_step_ = window_s / window_steps_;
    smooth_step_time(seconds_per_step_);
    window_start_ = now;
    window_images_ = window_steps_ = 0;
  } else if (images_per_s_ == 0 && window_s > 0) {
    // Until the first full window, the steps so far (a first log point
    // comes sooner than half a second on a fast model): a real rate, never 0.
    images_per_s_ = window_images_ / window_s;
    seconds_per_step_ = window_s / window_steps_;
  }
  if (!enabled_) return;
  const bool due = redraw_ ? std::chrono::duration<double>(now - last_draw_).count() >= 0.25
                           : state.step % log_every_ == 0;
  if (!due && state.step != state.total_steps) return;
  last_draw_ = now;
  draw(render(state));
}

void ProgressLine::evaluating(const std::string& label, std::int64_t batches_done, std::int64_t batches,
                              std::int64_t images) {
  const auto now = now_();
  if (batches_done == 0) evaluation_start_ = last_evaluation_line_ = now;
  if (!enabled_ || batches_done == 0) return;
  const auto seconds_since = [&](Clock::time_point then) { return std::chrono::duration<double>(now - then).count(); };
  const double elapsed = seconds_since(evaluation_start_);
  // Redrawn: at once at the first batch (the line says an evaluation began), then a few times a second.
  const bool due = redraw_ ? batches_done == 1 || seconds_since(last_draw_) >= 0.25
                           : seconds_since(last_evaluation_line_) >= kEvaluationLineSeconds;
  if (!due || batches_done >= batches) return;  // the result's line follows the last batch
  last_draw_ = last_evaluation_line_ = now;
  std::ostringstream line;
  line << label << "  batch " << batches_done << "/" << batches << "  " << std::fixed << std::setprecision(0)
       << (elapsed > 0 ? static_cast<double>(images) / elapsed : 0.0) << " img/s  ETA "
       << format_duration(elapsed / static_cast<double>(batches_done) * static_cast<double>(batches - batches_done));
  draw(line.str());
}

void ProgressLine::smooth_step_time(double window_seconds_per_step) {
  if (steps_seen_ <= kWarmupSteps) return;  // of this process: a resumed run warms up too
  if (smoothed_step_s_ == 0) {
    smoothed_step_s_ = window_seconds_per_step;
    return;
  }
  const double bounded = std::clamp(window_seconds_per_step, smoothed_step_s_ / kMostChange, smoothed_step_s_ * kMostChange);
  smoothed_step_s_ = kSmoothing * bounded + (1 - kSmoothing) * smoothed_step_s_;
}

void ProgressLine::restart_window() {
  window_start_ = now_();
  window_images_ = window_steps_ = 0;
}

void ProgressLine::message(const std::string& text) {
  if (line_open_) out_ << "\r\033[K";
  out_ << text << "\n" << std::flush;
  line_open_ = false;
  restart_window();
}

void ProgressLine::clear() {
  if (line_open_) out_ << "\r\033[K" << std::flush;
  line_open_ = false;
}

void ProgressLine::finish() {
  if (line_open_) out_ << "\n" << std::flush;
  line_open_ = false;
}

}  // namespace orchestrate
