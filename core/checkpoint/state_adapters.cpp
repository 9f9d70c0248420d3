#include "checkpoint/state_adapters.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <torch/cuda.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "orchestrate/error.h"

namespace orchestrate {

at::Tensor bytes_as_tensor(const std::string& bytes) {
  auto tensor = at::empty({static_cast<std::int64_t>(bytes.size())}, at::kByte);
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(tensor.data_ptr<std::uint8_t>()));
  return tensor;
}

std::string tensor_as_bytes(const at::Tensor& tensor) {
  const at::Tensor bytes = tensor.contiguous();
  return {reinterpret_cast<const char*>(bytes.data_ptr<std::uint8_t>()), static_cast<std::size_t>(bytes.numel())};
}

StateDict OptimizerState::state_dict() const {
  torch::serialize::OutputArchive archive;
  optimizer_.save(archive);
  std::ostringstream out;
  archive.save_to(out);
  return {{"archive", bytes_as_tensor(out.str())}};
}

namespace {

// The one device the optimizer's parameters are on, or none (spread over
// several, or no parameters): the state is then loaded where it was saved.
std::optional<c10::Device> parameters_device(const torch::optim::Optimizer& optimizer) {
  std::optional<c10::Device> device;
  for (const auto& group : optimizer.param_groups()) {
    for (const auto& parameter : group.params()) {
      if (!device) device = parameter.device();
      if (*device != parameter.device()) return std::nullopt;
    }
  }
  return device;
}

}  // namespace

void OptimizerState::load_state_dict(const StateDict& state) {
  const auto it = state.find("archive");
  if (it == state.end()) throw Error("its section holds no optimizer archive");
  const std::string bytes = tensor_as_bytes(it->second);
  torch::serialize::InputArchive archive;
  // Onto the parameters' device, not the saver's: only rank 0 saves, so
  // without it every rank's momentum and moments would come back on cuda:0
  // (ATen's fused kernels refuse state on another device than the
  // parameters'), and a GPU run's checkpoint could not resume on the CPU.
  archive.load_from(bytes.data(), bytes.size(), parameters_device(optimizer_));
  optimizer_.load(archive);
}

namespace {

std::vector<std::pair<std::string, at::Generator>> default_generators() {
  std::vector<std::pair<std::string, at::Generator>> out{{"cpu", at::detail::getDefaultCPUGenerator()}};
  const auto cuda_devices = static_cast<int>(torch::cuda::device_count());
  for (int i = 0; i < cuda_devices; ++i)
    out.emplace_back("cuda." + std::to_string(i), at::globalContext().defaultGenerator(c10::Device(
                                                     c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(i))));
  return out;
}

}  // namespace

StateDict RandomGenerators::state_dict() const {
  StateDict out;
  for (auto& [key, generator] : default_generators()) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    out[key] = generator.get_state();
  }
  return out;
}

void RandomGenerators::load_state_dict(const StateDict& state) {
  for (auto& [key, generator] : default_generators()) {
    const auto it = state.find(key);
    if (it == state.end()) {
      if (key == "cpu") throw Error("its section holds no CPU generator state");
      continue;  // a CUDA device the saving process did not have
    }
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(it->second);
  }
}

StateDict PartialUpdate::state_dict() const {
  StateDict out;
  if (micro_batches_done_ == 0) return out;
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    if (parameters_[i].grad().defined()) out["grad." + std::to_string(i)] = parameters_[i].grad();
  if (partial_loss_.defined()) out["partial_loss"] = partial_loss_;
  return out;
}

void PartialUpdate::load_state_dict(const StateDict& state) {
  at::NoGradGuard no_grad;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    const auto it = state.find("grad." + std::to_string(i));
    if (it == state.end()) continue;
    auto& param = const_cast<at::Tensor&>(parameters_[i]);
    if (param.grad().defined()) param.mutable_grad().copy_(it->second);
    else param.mutable_grad() = it->second.to(param.device()).contiguous(param.suggest_memory_format());
  }
  if (const auto it = state.find("partial_loss"); it != state.end()) partial_loss_ = it->second.to(device_);
}

}  // namespace orchestrate
