// The live progress line: epoch, step, loss, images/s, ETA; during an
// evaluation, its batches, images/s and ETA.
//
// On a terminal (or with [log] progress = "always") it is redrawn in place a
// few times a second; otherwise (CI logs, pipes) one line is printed every
// `log_every` steps, and during an evaluation one every
// kEvaluationLineSeconds, so a long one is never silent.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

namespace orchestrate {

enum class ProgressMode { auto_detect, always, never };
ProgressMode parse_progress_mode(const std::string& text);  // "auto", "always", "never"

struct ProgressState {
  std::int64_t epoch = 0;  // 1-based
  std::int64_t epochs = 0;
  std::int64_t step = 0;  // global steps done
  std::int64_t total_steps = 0;
  std::optional<double> loss;  // the last log point's mean; none before the first ("-")
  double learning_rate = 0;
};

class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  // Off a terminal, an evaluation's line at most this often: a CI log gets a
  // line a minute of a VGG16 evaluation on a CPU, not one a batch.
  static constexpr double kEvaluationLineSeconds = 30;
  // `now`: the clock (a test steps a fake one).
  ProgressLine(std::ostream& out, ProgressMode mode, std::int64_t log_every, bool out_is_terminal,
               std::function<Clock::time_point()> now = Clock::now);

  // Called after every step with that step's image count.
  void update(const ProgressState& state, std::int64_t images);
  // An evaluation's progress: `batches_done` of `batches` (0 at its start),
  // `images` scored so far; `label` names it ("eval after epoch 3").
  void evaluating(const std::string& label, std::int64_t batches_done, std::int64_t batches, std::int64_t images);
  // Prints a line that stays (eval results, a warning), keeping the progress
  // line intact. The time since the last step (an evaluation, a checkpoint)
  // does not count as step time.
  void message(const std::string& text);
  // Ends the redrawn line, if any.
  void finish();
  // Erases the redrawn line, if any: the result that follows says it all.
  void clear();

  static std::string format_duration(double seconds);  // "1:02:03", "4:05"

 private:
  std::string render(const ProgressState& state) const;
  void draw(const std::string& line);
  void restart_window();
  // Folds one window's time per step into the ETA's smoothed step time.
  void smooth_step_time(double window_seconds_per_step);

  std::ostream& out_;
  bool enabled_;
  bool redraw_;
  std::int64_t log_every_;
  std::function<Clock::time_point()> now_;
  Clock::time_point last_draw_;
  Clock::time_point window_start_;
  std::int64_t window_images_ = 0;
  std::int64_t window_steps_ = 0;
  std::int64_t steps_seen_ = 0;   // updates since this line was made
  double images_per_s_ = 0;
  double seconds_per_step_ = 0;   // the last window's, until the smoothed one starts
  double smoothed_step_s_ = 0;    // exponential moving average over windows; 0 until the first after warm-up
  bool line_open_ = false;
  Clock::time_point evaluation_start_;  // of the evaluation evaluating() last began
  Clock::time_point last_evaluation_line_;
};

}  // namespace orchestrate
