// The problems check_trials (sweep_run.h) finds in a sweep's trials, each
// said once however many trials meet it: a trial's --set value the recipe
// refuses, at its parameter's line in the spec, in the spec's order; a rule
// across keys, with the first trial that broke it and how many others did.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "sweep/sweep_spec.h"

namespace orchestrate::sweep {

class TrialProblems {
 public:
  explicit TrialProblems(const SweepSpec& spec) : spec_(spec) {}

  // A trial's recipe error, line by line.
  void add(const Trial& trial, const std::string& error);
  std::size_t size() const { return problems_.size(); }
  // One line each: the parameters' problems by their lines in the spec, then the trials'.
  std::vector<std::string> lines() const;

 private:
  static constexpr std::size_t kNoParameter = static_cast<std::size_t>(-1);
  struct Problem {
    std::string same;   // what makes two trials' lines one problem
    std::string text;   // as the first trial said it
    std::size_t line;   // its parameter's line in the spec, or kNoParameter: a rule across keys
    std::set<std::int64_t> trials;
  };

  void add_line(const Trial& trial, const std::string& line);
  void note(const std::string& same, const std::string& text, std::size_t line, const Trial& trial);

  const SweepSpec& spec_;
  std::vector<Problem> problems_;  // in the order first met
};

}  // namespace orchestrate::sweep
