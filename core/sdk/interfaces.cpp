// Out-of-line virtual destructors: each interface's vtable and typeinfo live
// in the SDK library, so dynamic_cast and exceptions work across plugins.
#include "orchestrate/dataset.h"
#include "orchestrate/error.h"
#include "orchestrate/gradient_compression.h"
#include "orchestrate/hook.h"
#include "orchestrate/lr_schedule.h"
#include "orchestrate/model.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/optimizer_wrapper.h"

namespace orchestrate {

Dataset::~Dataset() = default;
Model::~Model() = default;
ModelOutput Model::forward_train(const at::Tensor& images) { return {forward(images), {}}; }
LrSchedule::~LrSchedule() = default;
GradientCompressor::~GradientCompressor() = default;
std::map<std::string, at::Tensor> GradientCompressor::state() const { return {}; }
void GradientCompressor::load_state(const std::map<std::string, at::Tensor>&) {}
HookSink::~HookSink() = default;
Hook::~Hook() = default;
void Hook::on_train_begin(const TrainBegin&, HookSink&) {}
void Hook::before_update(std::int64_t) {}
void Hook::after_update(const StepView&, HookSink&) {}
void Hook::on_train_end(const TrainEnd&, HookSink&) {}
OptimizerWrapper::~OptimizerWrapper() = default;
void OptimizerWrapper::before_step(UpdateView&) {}
void OptimizerWrapper::after_step(UpdateView&) {}
void OptimizerWrapper::save(torch::serialize::OutputArchive&) const {}
void OptimizerWrapper::load(torch::serialize::InputArchive&) {}

std::vector<at::Tensor> tensors_of(const ParameterGroup& group) {
  std::vector<at::Tensor> out;
  out.reserve(group.parameters.size());
  for (const auto& parameter : group.parameters) out.push_back(parameter.tensor);
  return out;
}

double steps_per_unit(const std::string& unit, const ScheduleContext& context, const std::string& schedule) {
  if (unit != "epoch") return 1.0;
  if (context.steps_per_epoch <= 0)
    throw RecipeError("[schedule] " + schedule +
                      ": unit = \"epoch\" needs the steps per epoch, which are unknown here; use unit = \"step\"");
  return static_cast<double>(context.steps_per_epoch);
}

double decay_length_in_steps(double length, const std::string& unit, const ScheduleContext& context,
                             const std::string& schedule) {
  if (length == 0) return static_cast<double>(context.total_steps);
  return length * steps_per_unit(unit, context, schedule);
}

const char* to_string(DatasetSplit split) { return split == DatasetSplit::train ? "train" : "test"; }

}  // namespace orchestrate
