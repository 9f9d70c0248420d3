// PAI FastNN's learning-rate parameters (seeds/pai_fastnn_hyperparameters.txt),
// so a FastNN hyperparameter file carries over key for key. With
// lr = the optimizer's lr, t = the 0-based step, N = the run's steps and
// E = steps per epoch:
//
// Warmup, warmup_scheme = "t2t" (tensorflow/nmt model.py
// _get_learning_rate_warmup; FastNN: "start at 1/100 of the lr and rise
// exponentially"), W = warmup_steps:
//   warm(t) = lr * exp(ln(0.01) / W)^(W - t)   if t < W
//   warm(t) = lr                               otherwise
//
// Decay of the warmed-up lr, by learning_rate_decay_type (TF-slim
// train_image_classifier.py _configure_learning_rate):
//   fixed:       warm(t)
//   exponential: warm(t) * learning_rate_decay_factor^floor(t / D),
//                D = floor(decay_epochs x E)  (TF-slim's num_epochs_per_decay,
//                staircase exponential_decay)
//   polynomial:  (warm(t) - end_learning_rate) * (1 - min(t, N) / N) + end_learning_rate
//                (polynomial_decay, power 1, over the whole run)
//
// or, when decay_scheme is set, instead of that type (tensorflow/nmt model.py
// _get_decay_info and _get_learning_rate_decay; FastNN's table):
//   luong234: S = floor(2 N / 3), 4 halvings;  luong5: S = floor(N / 2), 5;
//   luong10:  S = floor(N / 2), 10
//   D = floor((N - S) / halvings)
//   lr(t) = warm(t)                          if t < S
//   lr(t) = warm(t) * 0.5^floor((t - S) / D)  otherwise
//
// Where FastNN's own code differs from its documentation, the documentation
// and the sources it cites win: its luong schemes use learning_rate_decay_factor
// (the table and nmt say 1/2), its exponential and polynomial types decay only
// under a decay_scheme (without one they never decay), and its fixed type
// drops the warmup. D is at least 1 step, so runs shorter than the number of
// halvings stay finite (nmt would divide by zero).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "orchestrate/error.h"
#include "orchestrate/lr_schedule.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

using orchestrate::Params;
using orchestrate::RecipeError;
using orchestrate::ScheduleContext;

// decay_epochs x steps per epoch is rarely a whole number in binary floating
// point (0.1 x 30 = 3.0000000000000004); without this slack, a period meant
// to be whole could lose its last step to the floor.
constexpr double kRoundingSlack = 1e-9;

enum class Decay { fixed, exponential, polynomial, halvings };

struct FastNnSettings {
  double base_lr = 0;
  std::int64_t warmup_steps = 0;
  Decay decay = Decay::exponential;
  std::int64_t decay_start = 0;   // halvings: the first step that decays
  std::int64_t decay_period = 1;  // exponential and halvings: steps per decay
  double decay_factor = 1;        // exponential: learning_rate_decay_factor; halvings: 0.5
  double end_lr = 0;              // polynomial
  std::int64_t total_steps = 1;   // polynomial
};

class FastNnLearningRate final : public orchestrate::LrSchedule {
 public:
  explicit FastNnLearningRate(FastNnSettings settings) : s_(settings) {}

  double learning_rate(std::int64_t step) const override {
    const double lr = warmed_up(step);
    switch (s_.decay) {
      case Decay::fixed: return lr;
      case Decay::exponential: return lr * std::pow(s_.decay_factor, static_cast<double>(step / s_.decay_period));
      case Decay::polynomial: {
        const double t = static_cast<double>(std::min(step, s_.total_steps));
        return (lr - s_.end_lr) * (1 - t / static_cast<double>(s_.total_steps)) + s_.end_lr;
      }
      case Decay::halvings:
        if (step < s_.decay_start) return lr;
        return lr * std::pow(s_.decay_factor, static_cast<double>((step - s_.decay_start) / s_.decay_period));
    }
    return lr;
  }

 private:
  double warmed_up(std::int64_t step) const {
    if (step >= s_.warmup_steps) return s_.base_lr;
    const double w = static_cast<double>(s_.warmup_steps);
    return s_.base_lr * std::pow(std::exp(std::log(0.01) / w), static_cast<double>(s_.warmup_steps - step));
  }

  FastNnSettings s_;
};

FastNnSettings luong_halvings(const std::string& scheme, std::int64_t total_steps) {
  FastNnSettings settings;
  settings.decay = Decay::halvings;
  settings.decay_factor = 0.5;
  settings.decay_start = scheme == "luong234" ? total_steps * 2 / 3 : total_steps / 2;
  const std::int64_t halvings = scheme == "luong234" ? 4 : scheme == "luong5" ? 5 : 10;
  settings.decay_period = std::max<std::int64_t>((total_steps - settings.decay_start) / halvings, 1);
  return settings;
}

std::unique_ptr<orchestrate::LrSchedule> make_fastnn(const Params& params, const ScheduleContext& context) {
  FastNnSettings settings;
  const auto& scheme = params.string("decay_scheme");
  const auto& type = params.string("learning_rate_decay_type");
  if (!scheme.empty()) {
    settings = luong_halvings(scheme, context.total_steps);
  } else if (type == "fixed") {
    settings.decay = Decay::fixed;
  } else if (type == "polynomial") {
    settings.decay = Decay::polynomial;
    settings.end_lr = params.real("end_learning_rate");
    settings.total_steps = std::max<std::int64_t>(context.total_steps, 1);
  } else {
    if (context.steps_per_epoch <= 0)
      throw RecipeError(
          "[schedule] fastnn: learning_rate_decay_type = \"exponential\" decays every decay_epochs, which needs "
          "the steps per epoch, unknown here; use another learning_rate_decay_type or a decay_scheme");
    settings.decay = Decay::exponential;
    settings.decay_factor = params.real("learning_rate_decay_factor");
    const double period = params.real("decay_epochs") * static_cast<double>(context.steps_per_epoch);
    settings.decay_period = std::max<std::int64_t>(static_cast<std::int64_t>(period + kRoundingSlack), 1);
  }
  settings.base_lr = context.base_lr;
  settings.warmup_steps = params.integer("warmup_steps");
  return std::make_unique<FastNnLearningRate>(settings);
}

// A decay_scheme replaces the decay type, so a type other than the default
// beside it would be silently ignored.
std::string decay_choice_problem(const Params& params) {
  const auto& scheme = params.string("decay_scheme");
  const auto& type = params.string("learning_rate_decay_type");
  if (scheme.empty() || type == "exponential") return "";
  return "decay_scheme = \"" + scheme + "\" replaces learning_rate_decay_type, so learning_rate_decay_type = \"" +
         type + "\" would be ignored; remove one of the two";
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      string_param("learning_rate_decay_type", "exponential",
                   "fixed, exponential (x learning_rate_decay_factor every decay_epochs) or polynomial (linear to "
                   "end_learning_rate over the run)")
          .one_of({"fixed", "exponential", "polynomial"}),
      real_param("learning_rate_decay_factor", 0.94, "exponential: factor applied once every decay_epochs")
          .greater_than(0)
          .at_most(1),
      real_param("decay_epochs", 2.0, "exponential: epochs between decays (TF-slim's num_epochs_per_decay)")
          .greater_than(0),
      real_param("end_learning_rate", 0.0001, "polynomial: absolute lr at the end of the run").at_least(0),
      int_param("warmup_steps", 0, "steps that rise exponentially from 1/100 of the lr to the lr; 0: no warmup")
          .at_least(0),
      string_param("warmup_scheme", "t2t", "how the warmup rises: t2t (Tensor2Tensor's exponential rise)")
          .one_of({"t2t"}),
      string_param("decay_scheme", "",
                   "Luong's NMT halvings instead of learning_rate_decay_type: luong234 (halve 4 times over the last "
                   "third), luong5 or luong10 (5 or 10 times over the last half); \"\": none")
          .one_of({"", "luong234", "luong5", "luong10"}),
  };
  schema.rule(decay_choice_problem);
  registry.lr_schedules().add("fastnn", "PAI FastNN's learning-rate parameters: t2t warmup, then decay type or scheme",
                              std::move(schema), make_fastnn);
}

}  // namespace

ORCHESTRATE_PLUGIN("fastnn", "1.0.0", register_components)
