// Out-of-line virtual destructors: each interface's vtable and typeinfo live
// in the SDK library, so dynamic_cast and exceptions work across plugins.
#include <ATen/ops/empty.h>
#include <ATen/ops/tensor.h>

#include <cstring>
#include <stdexcept>

#include "orchestrate/stateful.h"
#include "orchestrate/dataset.h"
#include "orchestrate/error.h"
#include "orchestrate/gradient_compression.h"
#include "orchestrate/hook.h"
#include "orchestrate/lr_schedule.h"
#include "orchestrate/model.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/optimizer_wrapper.h"
#include "orchestrate/preprocessing.h"

namespace orchestrate {

Dataset::~Dataset() = default;
std::vector<std::int64_t> Dataset::examples_per_file() const { return {}; }
DataEventSink::~DataEventSink() = default;
Preprocessing::~Preprocessing() = default;
DecodeWindow Preprocessing::decode_window(std::int64_t height, std::int64_t width, std::uint64_t) const {
  return whole_image(height, width);
}
Model::~Model() = default;
ModelOutput Model::forward_train(const at::Tensor& images) { return {forward(images), {}}; }
LrSchedule::~LrSchedule() = default;
GradientCompressor::~GradientCompressor() = default;
HookSink::~HookSink() = default;
Stateful::~Stateful() = default;
StateDict Stateful::state_dict() const { return {}; }
void Stateful::load_state_dict(const StateDict&) {}
Hook::~Hook() = default;
void Hook::on_train_begin(const TrainBegin&, HookSink&) {}
void Hook::before_update(std::int64_t) {}
void Hook::after_update(const StepView&, HookSink&) {}
void Hook::on_train_end(const TrainEnd&, HookSink&) {}
SkipsOnDevice::~SkipsOnDevice() = default;
OptimizerWrapper::~OptimizerWrapper() = default;
void OptimizerWrapper::before_step(UpdateView&) {}
void OptimizerWrapper::after_step(UpdateView&) {}

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

const char* to_string(PreprocessingVariant variant) {
  return variant == PreprocessingVariant::train ? "train" : "eval";
}

Batch stack_examples(const Dataset& dataset, const std::vector<std::int64_t>& indices) {
  const auto count = static_cast<std::int64_t>(indices.size());
  std::vector<std::int64_t> labels(indices.size());
  at::Tensor images;
  for (std::int64_t i = 0; i < count; ++i) {
    SampleRequest request;
    request.index = indices[static_cast<std::size_t>(i)];
    request.seed = static_cast<std::uint64_t>(request.index);
    const Example example = dataset.example(request);
    const auto pixels = example.pixels.contiguous();
    if (pixels.scalar_type() != at::kByte || pixels.dim() != 3)
      throw std::invalid_argument("stack_examples: example " + std::to_string(request.index) +
                                  " is not uint8 [H, W, C] pixels (a dataset bug)");
    if (!images.defined()) {
      images = at::empty({count, pixels.size(0), pixels.size(1), pixels.size(2)}, pixels.options());
    } else if (!pixels.sizes().equals(images.sizes().slice(1))) {
      throw std::invalid_argument("stack_examples: example " + std::to_string(request.index) +
                                  " differs in size from the first; stack examples of one size");
    }
    std::memcpy(static_cast<std::uint8_t*>(images.data_ptr()) + i * pixels.numel(), pixels.data_ptr(),
                static_cast<std::size_t>(pixels.numel()));
    labels[static_cast<std::size_t>(i)] = example.label;
  }
  if (!images.defined()) images = at::empty({0, 0, 0, 0}, at::kByte);
  return {images, at::tensor(labels)};
}

}  // namespace orchestrate
