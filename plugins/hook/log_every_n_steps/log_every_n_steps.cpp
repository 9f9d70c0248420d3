// FastNN's log_loss_every_n_iters: a permanent log line every N updates with
// the loss of exactly that update (the progress line shows a window's mean
// and is redrawn in place), and train/step_loss recorded at that cadence.
// Reading the loss waits for the device, so it happens only every N updates.
#include <cstdint>
#include <iomanip>
#include <memory>
#include <sstream>
#include <string>

#include "orchestrate/hook.h"
#include "orchestrate/plugin.h"

namespace {

class LogEveryNSteps final : public orchestrate::Hook {
 public:
  LogEveryNSteps(std::int64_t every, bool record, bool leader) : every_(every), record_(record), leader_(leader) {}

  void after_update(const orchestrate::StepView& step, orchestrate::HookSink& sink) override {
    images_ += step.images;
    seconds_ += step.step_s;
    // every_n = 0: on the run's own rhythm, the updates it logs at.
    const bool due = every_ > 0 ? step.step % every_ == 0 : step.log_point;
    if (!leader_ || (!due && step.step != step.total_steps)) return;
    const double loss = step.loss.item<double>();
    std::ostringstream line;
    line << "step " << step.step << "/" << step.total_steps << "  epoch " << step.epoch << "  loss " << std::fixed
         << std::setprecision(4) << loss << "  lr " << std::defaultfloat << std::setprecision(4)
         << step.learning_rate << "  img/s " << std::fixed << std::setprecision(1)
         << (seconds_ > 0 ? static_cast<double>(images_) / seconds_ : 0.0);
    sink.print(line.str());
    if (record_) sink.metric("train/step_loss", loss);
    images_ = 0;
    seconds_ = 0;
  }

 private:
  std::int64_t every_;
  bool record_;
  bool leader_;  // one line per job, from rank 0
  std::int64_t images_ = 0;
  double seconds_ = 0;
};

void register_components(orchestrate::Registry& registry) {
  registry.hooks().add(
      "log_every_n_steps",
      "a log line every N updates with that update's loss, lr and images/s (FastNN's log_loss_every_n_iters)",
      {orchestrate::int_param("every_n", 100,
                              "updates between lines; 0: at the run's log points ([run] log_every); the last update "
                              "always gets one")
           .at_least(0),
       orchestrate::bool_param("record", true, "also record the loss as train/step_loss at each line")},
      [](const orchestrate::Params& params, const orchestrate::HookContext& context) {
        return std::make_unique<LogEveryNSteps>(params.integer("every_n"), params.boolean("record"),
                                                context.rank == 0);
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("log_every_n_steps", "1.0.0", register_components)
