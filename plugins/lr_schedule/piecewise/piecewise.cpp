// Piecewise-constant learning rate, the step schedule of most ImageNet
// recipes (torch's MultiStepLR, TF's piecewise_constant; MoXing's stage
// strings, ramps included, are the `strategy` schedule).
//
// Factors multiply the optimizer's lr rather than replacing it, so the
// optimizer's lr stays the one knob that scales a run (e.g. the linear
// scaling rule: --set optimizer.lr=0.4) and is never silently ignored.
// Values, the alternative, are absolute lrs, for recipes ported from
// frameworks that write them so (TF's piecewise_constant).
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

std::string count_text(std::size_t count, const char* singular, const char* plural) {
  return std::to_string(count) + " " + (count == 1 ? singular : plural);
}

// What is wrong between boundaries, factors and values, or "".
std::string piecewise_problem(const Params& params) {
  const auto& boundaries = params.real_list("boundaries");
  const auto& factors = params.real_list("factors");
  const auto& values = params.real_list("values");
  const std::size_t intervals = boundaries.size() + 1;
  const std::string make_intervals = count_text(boundaries.size(), "boundary makes ", "boundaries make ") +
                                     count_text(intervals, "interval", "intervals");
  if (!factors.empty() && !values.empty())
    return "factors (multiples of the optimizer's lr) and values (absolute lrs) are both given; keep one of them";
  if (factors.empty() && values.empty() && !boundaries.empty())
    return make_intervals + "; give factors (multiples of the optimizer's lr) or values (absolute lrs), " +
           count_text(intervals, "entry", "entries") + ", one per interval";
  const bool by_factors = !factors.empty();
  const auto& given = by_factors ? factors : values;
  if (!given.empty() && given.size() != intervals)
    return make_intervals + ", so " + (by_factors ? "factors" : "values") + " needs " +
           count_text(intervals, "entry", "entries") + ", one per interval, but has " + std::to_string(given.size());
  for (std::size_t i = 1; i < boundaries.size(); ++i)
    if (boundaries[i] <= boundaries[i - 1])
      return "boundaries must be strictly ascending, but " + list_text(boundaries) + " has " +
             number_text(boundaries[i]) + " after " + number_text(boundaries[i - 1]);
  return "";
}

std::unique_ptr<orchestrate::LrSchedule> make_piecewise(const Params& params, const ScheduleContext& context) {
  if (auto problem = piecewise_problem(params); !problem.empty())
    throw RecipeError("[schedule] piecewise: " + problem);
  const double steps_per_unit = orchestrate::steps_per_unit(params.string("unit"), context, "piecewise");
  std::vector<std::int64_t> interval_starts;
  for (const double boundary : params.real_list("boundaries"))
    interval_starts.push_back(static_cast<std::int64_t>(std::ceil(boundary * steps_per_unit - kRoundingSlack)));
  std::vector<double> learning_rates = params.real_list("values");
  for (const double factor : params.real_list("factors")) learning_rates.push_back(context.base_lr * factor);
  // Neither given (and so no boundaries): one interval at the optimizer's lr.
  if (learning_rates.empty()) learning_rates.push_back(context.base_lr);
  return std::make_unique<PiecewiseConstant>(std::move(interval_starts), std::move(learning_rates));
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_list_param("boundaries", std::vector<double>{},
                      "strictly ascending points, in `unit`s, where the next interval starts")
          .at_least(0),
      real_list_param("factors", std::vector<double>{},
                      "lr of each interval as a multiple of the optimizer's lr, one more entry than boundaries; "
                      "[]: not given (use values, or the optimizer's lr throughout)")
          .at_least(0),
      real_list_param("values", std::vector<double>{},
                      "lr of each interval, absolute (replacing the optimizer's lr), one more entry than "
                      "boundaries; instead of factors")
          .at_least(0),
      string_param("unit", "epoch", "what boundaries count").one_of({"epoch", "step"}),
  };
  schema.rule(piecewise_problem);
  registry.lr_schedules().add("piecewise",
                              "piecewise constant: lr = base * factors[i], or values[i], in the i-th interval",
                              std::move(schema), make_piecewise);
}

}  // namespace

ORCHESTRATE_PLUGIN("piecewise", "1.0.0", register_components)
