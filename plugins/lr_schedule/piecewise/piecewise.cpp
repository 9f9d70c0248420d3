// Piecewise-constant learning rate, the step schedule of most ImageNet
// recipes (and MoXing's "30:0.4,60:0.04,80:0.004" strategy).
//
// Factors multiply the optimizer's lr rather than replacing it, so the
// optimizer's lr stays the one knob that scales a run (e.g. the linear
// scaling rule: --set optimizer.lr=0.4) and is never silently ignored.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/lr_schedule.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

using orchestrate::Params;
using orchestrate::RecipeError;
using orchestrate::ScheduleContext;

// Boundaries given in epochs are rarely whole steps in binary floating point
// (2.2 epochs x 25 steps = 55.00000000000001); without this slack, a boundary
// meant to fall on a step would move to the next one.
constexpr double kRoundingSlack = 1e-9;

class PiecewiseConstant final : public orchestrate::LrSchedule {
 public:
  PiecewiseConstant(std::vector<std::int64_t> interval_starts, std::vector<double> learning_rates)
      : interval_starts_(std::move(interval_starts)), learning_rates_(std::move(learning_rates)) {}

  double learning_rate(std::int64_t step) const override {
    const auto interval =
        std::upper_bound(interval_starts_.begin(), interval_starts_.end(), step) - interval_starts_.begin();
    return learning_rates_[static_cast<std::size_t>(interval)];
  }

 private:
  std::vector<std::int64_t> interval_starts_;  // first step of interval i + 1
  std::vector<double> learning_rates_;         // one more than interval_starts_
};

std::string number_text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::string list_text(const std::vector<double>& values) {
  std::string out;
  for (const double value : values) out += (out.empty() ? "" : ", ") + number_text(value);
  return "[" + out + "]";
}

std::unique_ptr<orchestrate::LrSchedule> make_piecewise(const Params& params, const ScheduleContext& context) {
  const auto& boundaries = params.real_list("boundaries");
  const auto& factors = params.real_list("factors");
  if (factors.size() != boundaries.size() + 1)
    throw RecipeError("[schedule] piecewise: " + std::to_string(boundaries.size()) + " boundaries make " +
                      std::to_string(boundaries.size() + 1) + " intervals, so factors needs " +
                      std::to_string(boundaries.size() + 1) + " entries, one per interval, but has " +
                      std::to_string(factors.size()));
  for (std::size_t i = 1; i < boundaries.size(); ++i)
    if (boundaries[i] <= boundaries[i - 1])
      throw RecipeError("[schedule] piecewise: boundaries must be strictly ascending, but " + list_text(boundaries) +
                        " has " + number_text(boundaries[i]) + " after " + number_text(boundaries[i - 1]));
  double steps_per_unit = 1.0;
  if (params.string("unit") == "epoch") {
    if (context.steps_per_epoch <= 0)
      throw RecipeError(
          "[schedule] piecewise: unit = \"epoch\" needs the steps per epoch, which are unknown here; "
          "use unit = \"step\"");
    steps_per_unit = static_cast<double>(context.steps_per_epoch);
  }
  std::vector<std::int64_t> interval_starts;
  for (const double boundary : boundaries)
    interval_starts.push_back(static_cast<std::int64_t>(std::ceil(boundary * steps_per_unit - kRoundingSlack)));
  std::vector<double> learning_rates;
  for (const double factor : factors) learning_rates.push_back(context.base_lr * factor);
  return std::make_unique<PiecewiseConstant>(std::move(interval_starts), std::move(learning_rates));
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_list_param("boundaries", std::vector<double>{},
                      "strictly ascending points, in `unit`s, where the next interval starts")
          .at_least(0),
      real_list_param("factors", std::vector<double>{1.0},
                      "lr of each interval as a multiple of the optimizer's lr; one more entry than boundaries")
          .at_least(0),
      string_param("unit", "epoch", "what boundaries count").one_of({"epoch", "step"}),
  };
  registry.lr_schedules().add("piecewise", "piecewise constant: lr = base * factors[i] in the i-th interval",
                              std::move(schema), make_piecewise);
}

}  // namespace

ORCHESTRATE_PLUGIN("piecewise", "1.0.0", register_components)
