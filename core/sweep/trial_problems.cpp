#include "sweep/trial_problems.h"

#include <algorithm>
#include <charconv>

namespace orchestrate::sweep {

namespace {

std::string overrides_text(const Trial& trial) {
  std::string out;
  for (const auto& [key, value] : trial.overrides) out += (out.empty() ? "" : " ") + key + "=" + value;
  return out;
}

// 7 of "spec.toml:7:19"; past every line when `where` has none.
std::size_t line_of(const std::string& where) {
  const std::size_t last = where.rfind(':');
  const std::size_t before = last == std::string::npos || last == 0 ? std::string::npos : where.rfind(':', last - 1);
  std::size_t line = static_cast<std::size_t>(-2);
  if (before != std::string::npos) std::from_chars(where.data() + before + 1, where.data() + last, line);
  return line;
}

}  // namespace

void TrialProblems::add(const Trial& trial, const std::string& error) {
  std::size_t begin = 0;
  while (begin < error.size()) {
    const std::size_t end = std::min(error.find('\n', begin), error.size());
    add_line(trial, error.substr(begin, end - begin));
    begin = end + 1;
  }
}

std::vector<std::string> TrialProblems::lines() const {
  std::vector<const Problem*> ordered;
  for (const Problem& problem : problems_) ordered.push_back(&problem);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const Problem* a, const Problem* b) { return a->line < b->line; });
  std::vector<std::string> out;
  for (const Problem* problem : ordered) {
    const std::size_t others = problem->trials.size() - 1;
    const bool counted = problem->line == kNoParameter && others > 0;
    out.push_back(problem->text +
                  (!counted ? "" : " (and " + std::to_string(others) + " other trial" + (others == 1 ? ")" : "s)")));
  }
  return out;
}

void TrialProblems::add_line(const Trial& trial, const std::string& line) {
  for (const auto& [set_key, value] : trial.overrides) {
    const std::string& key = set_key;  // a binding a lambda can take
    const std::string prefix = "--set " + key + "=" + value + ": ";
    if (!line.starts_with(prefix)) continue;
    const auto parameter = std::find_if(spec_.parameters.begin(), spec_.parameters.end(),
                                        [&](const Parameter& p) { return p.key == key; });
    const bool found = parameter != spec_.parameters.end();
    // One line for a problem of the key's, whichever value met it first; the value says which.
    const std::string where = (found ? parameter->where : spec_.path) + ": " + key;
    note(where + ": " + line.substr(prefix.size()), where + " = " + value + ": " + line.substr(prefix.size()),
         found ? line_of(parameter->where) : kNoParameter, trial);
    return;
  }
  note(line, spec_.path + ": trial " + std::to_string(trial.index) + " (" + overrides_text(trial) + "): " + line,
       kNoParameter, trial);
}

void TrialProblems::note(const std::string& same, const std::string& text, std::size_t line, const Trial& trial) {
  const auto found = std::find_if(problems_.begin(), problems_.end(), [&](const Problem& p) { return p.same == same; });
  if (found != problems_.end()) found->trials.insert(trial.index);
  else problems_.push_back({same, text, line, {trial.index}});
}

}  // namespace orchestrate::sweep
