// MoXing's learning_rate_strategy text, "5:0.001->0.4,30:0.4,60:0.04": a
// comma-separated list of stages, each `end:lr` (constant) or
// `end:lr_start->lr_end` (a ramp), read into numbers or into the one-line
// problem with the first bad stage.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace orchestrate::lr_stages {

struct Stage {
  std::string text;  // as written, without surrounding spaces, for messages
  double end = 0;    // where the stage ends, in the schedule's unit
  double start_lr = 0;
  double end_lr = 0;  // == start_lr for a constant stage
  bool ramp = false;
};

struct Parsed {
  std::vector<Stage> stages;
  std::string problem;  // "" when the text is fine
};

// Stages in order; a problem names the stage's position (1-based) and text,
// what is wrong and how to write it instead. Ends must be > 0 and increase;
// learning rates must be finite and >= 0.
Parsed parse(std::string_view text);

}  // namespace orchestrate::lr_stages
