// What the user reads while a run trains: the progress line (none with
// --quiet, nor on ranks other than 0), and the lines a run says even with
// --quiet (a hook's output, what a resumed run continues).
#pragma once

#include <sstream>
#include <string>

#include "engine/recipe/settings.h"
#include "engine/train/progress_line.h"
#include "engine/train/trainer.h"

namespace orchestrate {

class RunConsole {
 public:
  // `leader`: this process speaks for the run (alone, or rank 0).
  RunConsole(const TrainOptions& options, const Settings& settings, bool leader);

  ProgressLine& progress() { return progress_; }
  // A line beside the progress line; with --quiet, on stderr (leader only).
  void say(const std::string& line);

 private:
  std::ostringstream null_stream_;  // where the progress line goes when it goes nowhere
  ProgressLine progress_;
  const bool quiet_;
  const bool leader_;
};

}  // namespace orchestrate
