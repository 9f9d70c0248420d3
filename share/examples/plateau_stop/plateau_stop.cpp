// hook "plateau_stop": early stopping on the training loss, as Lightning's
// EarlyStopping does on a monitored metric. At each of the run's log points
// it compares train/loss with the best so far; after `patience` log points
// without an improvement of at least `min_delta`, it stops the run (the
// final evaluation and checkpoint follow).
//
// Its best loss and its count of log points since are state: a run killed
// and resumed must stop where the uninterrupted run stops, so the hook
// saves them with every checkpoint (state_dict) and takes them back on
// --resume (load_state_dict).
#include <ATen/ATen.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>

#include "orchestrate/hook.h"
#include "orchestrate/plugin.h"

namespace {

class PlateauStop final : public orchestrate::Hook {
 public:
  PlateauStop(std::int64_t patience, double min_delta) : patience_(patience), min_delta_(min_delta) {}

  void after_update(const orchestrate::StepView& step, orchestrate::HookSink& sink) override {
    if (!step.log_point) return;  // the loss is read on the host only where the run logs it
    const double loss = step.loss.item<double>();
    if (loss < best_loss_ - min_delta_) {
      best_loss_ = loss;
      since_best_ = 0;
    } else {
      ++since_best_;
    }
    sink.metric("hook/best_loss", best_loss_);
    sink.metric("hook/log_points_since_best", static_cast<double>(since_best_));
    if (since_best_ >= patience_) {
      std::ostringstream why;
      why << "train/loss has not improved on " << best_loss_ << " by " << min_delta_ << " for " << since_best_
          << " log points";
      sink.request_stop(why.str());
    }
  }

  orchestrate::StateDict state_dict() const override {
    return {{"best_loss", at::scalar_tensor(best_loss_, at::kDouble)},
            {"since_best", at::scalar_tensor(since_best_, at::kLong)}};
  }
  void load_state_dict(const orchestrate::StateDict& state) override {
    best_loss_ = state.at("best_loss").item<double>();
    since_best_ = state.at("since_best").item<std::int64_t>();
  }

 private:
  const std::int64_t patience_;
  const double min_delta_;
  double best_loss_ = std::numeric_limits<double>::infinity();
  std::int64_t since_best_ = 0;
};

void register_components(orchestrate::Registry& registry) {
  registry.hooks().add(
      "plateau_stop", "stops the run when train/loss stops improving (early stopping), across --resume",
      {orchestrate::int_param("patience", 5, "log points without improvement before stopping").at_least(1),
       orchestrate::real_param("min_delta", 0.0, "the least decrease of train/loss that counts as one").at_least(0)},
      [](const orchestrate::Params& params, const orchestrate::HookContext&) {
        return std::make_unique<PlateauStop>(params.integer("patience"), params.real("min_delta"));
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("plateau_stop", "0.1.0", register_components)
