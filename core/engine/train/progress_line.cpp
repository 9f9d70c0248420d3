#include "progress_line.h"

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

ProgressLine::ProgressLine(std::ostream& out, ProgressMode mode, std::int64_t log_every, bool out_is_terminal)
    : out_(out),
      enabled_(mode != ProgressMode::never),
      // always: redrawn in place even off a terminal (a log viewer that
      // renders carriage returns, `script`, an IDE console).
      redraw_(out_is_terminal || mode == ProgressMode::always),
      log_every_(log_every),
      last_draw_(Clock::now()),
      window_start_(Clock::now()) {}

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
       << format_duration(seconds_per_step_ * static_cast<double>(s.total_steps - s.step));
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
  const auto now = Clock::now();
  const double window_s = std::chrono::duration<double>(now - window_start_).count();
  // Rates over a window of at least half a second, so the figures do not flicker.
  if (window_s >= 0.5) {
    images_per_s_ = window_images_ / window_s;
    seconds_per_step_ = window_s / window_steps_;
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

void ProgressLine::message(const std::string& text) {
  if (line_open_) out_ << "\r\033[K";
  out_ << text << "\n" << std::flush;
  line_open_ = false;
}

void ProgressLine::finish() {
  if (line_open_) out_ << "\n" << std::flush;
  line_open_ = false;
}

}  // namespace orchestrate
