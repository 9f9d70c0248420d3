// Helpers shared by the lr_schedule plugins' tests: build the plugin under
// test from its defaults, run its schema's rules, and get the rates PyTorch's
// own schedulers give, for the parity tests.
//
// Not a plugin (no CMakeLists.txt here); each <name>_test.cpp includes it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "orchestrate/lr_schedule.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/testing/plugin_under_test.h"
#include "orchestrate/testing/python_reference.h"

namespace orchestrate::testing {

using Customize = std::function<void(Params&)>;

// The schedule `name` of the plugin under test, built from its defaults as
// changed by `customize`.
inline std::unique_ptr<LrSchedule> make_schedule(const std::string& name, const ScheduleContext& context,
                                                 const Customize& customize = {}) {
  const auto& entry = plugin_under_test().lr_schedules().get(name);
  auto params = default_params(entry.info.schema);
  if (customize) customize(params);
  return entry.create(params, context);
}

// What the schema's cross-key rules say about the defaults as changed by
// `customize` (what the host reports when the recipe loads); "" when fine.
inline std::string rule_problems(const std::string& name, const Customize& customize) {
  const auto& entry = plugin_under_test().lr_schedules().get(name);
  auto params = default_params(entry.info.schema);
  customize(params);
  std::string all;
  for (const auto& problem : entry.info.schema.broken_rules(params)) all += (all.empty() ? "" : "\n") + problem;
  return all;
}

inline std::vector<double> rates_of(const LrSchedule& schedule, std::int64_t steps) {
  std::vector<double> rates;
  for (std::int64_t step = 0; step < steps; ++step) rates.push_back(schedule.learning_rate(step));
  return rates;
}

// A double as Python source that reads back as the same value.
inline std::string python_number(double value) {
  std::ostringstream out;
  out << std::setprecision(17) << value;
  return out.str();
}

// One scheduler of torch.optim.lr_scheduler to step: `scheduler` is a Python
// expression of `optimizer`, an SGD (momentum 0.9) at `base_lr`.
struct TorchScheduler {
  std::string name;  // how the test asks for its rates
  std::string scheduler;
  double base_lr = 0;
  std::int64_t steps = 0;
};

// The lr of each of the first `steps` updates under each scheduler, stepped as
// a training loop steps it (optimizer.step(), then scheduler.step()). All are
// computed by one Python run, since importing torch takes seconds.
class TorchReference {
 public:
  explicit TorchReference(const std::vector<TorchScheduler>& schedulers) {
    std::string script =
        "import torch\n"
        "def rates(base_lr, steps, make):\n"
        "    param = torch.nn.Parameter(torch.zeros(1))\n"
        "    optimizer = torch.optim.SGD([param], lr=base_lr, momentum=0.9)\n"
        "    scheduler = make(optimizer)\n"
        "    for _ in range(steps):\n"
        "        print(repr(float(optimizer.param_groups[0]['lr'])))\n"
        "        optimizer.step()\n"
        "        scheduler.step()\n"
        "    print('end')\n";
    for (const auto& s : schedulers)
      script += "rates(" + python_number(s.base_lr) + ", " + std::to_string(s.steps) +
                ", lambda optimizer: torch.optim.lr_scheduler." + s.scheduler + ")\n";
    std::istringstream lines(run_python(script));
    for (const auto& s : schedulers) {
      auto& rates = rates_[s.name];
      for (std::string line; std::getline(lines, line) && line != "end";) rates.push_back(std::stod(line));
    }
  }

  const std::vector<double>& rates(const std::string& name) const { return rates_.at(name); }

 private:
  std::map<std::string, std::vector<double>> rates_;
};

// Same length, and every rate within `relative` of the expected one (or within
// `relative` x the largest expected rate where the expected rate is 0).
inline ::testing::AssertionResult rates_match(const std::vector<double>& actual, const std::vector<double>& expected,
                                              double relative) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure() << actual.size() << " rates, expected " << expected.size();
  double largest = 0;
  for (const double rate : expected) largest = std::max(largest, std::abs(rate));
  for (std::size_t step = 0; step < actual.size(); ++step) {
    const double tolerance = relative * (expected[step] != 0 ? std::abs(expected[step]) : largest);
    if (!(std::abs(actual[step] - expected[step]) <= tolerance))
      return ::testing::AssertionFailure() << std::setprecision(17) << "step " << step << ": lr " << actual[step]
                                           << ", expected " << expected[step] << " (relative tolerance " << relative
                                           << ")";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace orchestrate::testing
