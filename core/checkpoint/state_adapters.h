// Stateful faces for run state that lives in LibTorch objects rather than in
// a part of ours: the optimizer, the random generators, and the gradients of
// an update stopped between its micro-batches. Each is registered with the
// TrainerState like any part.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <string>
#include <vector>

#include "orchestrate/stateful.h"

namespace orchestrate {

// An archive's bytes as the uint8 tensor a section holds, and back.
at::Tensor bytes_as_tensor(const std::string& bytes);
std::string tensor_as_bytes(const at::Tensor& tensor);

// LibTorch's C++ optimizers serialize only to an archive (their state is
// per-type structs, not named tensors), so the section is that archive's
// bytes: {"archive": uint8}. Any optimizer plugin round-trips exactly.
class OptimizerState final : public Stateful {
 public:
  explicit OptimizerState(torch::optim::Optimizer& optimizer) : optimizer_(optimizer) {}
  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state) override;

 private:
  torch::optim::Optimizer& optimizer_;
};

// The default generator of every device this process uses: the CPU one
// (weight init, dropout on CPU) and each CUDA device's ("cpu", "cuda.0").
// A CUDA device the saving process did not have keeps its state.
class RandomGenerators final : public Stateful {
 public:
  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state) override;
};

// A checkpoint taken between two micro-batches of one update holds the
// gradients accumulated so far ("grad.<i>", in optimizer order) and their
// summed loss; at an update's end it holds nothing here.
class PartialUpdate final : public Stateful {
 public:
  // `partial_loss` and `micro_batches_done` are the run's position, read
  // when saving; `device` is where a restored loss goes.
  PartialUpdate(const std::vector<at::Tensor>& parameters, at::Tensor& partial_loss,
                const std::int64_t& micro_batches_done, c10::Device device)
      : parameters_(parameters),
        partial_loss_(partial_loss),
        micro_batches_done_(micro_batches_done),
        device_(device) {}
  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state) override;

 private:
  const std::vector<at::Tensor>& parameters_;
  at::Tensor& partial_loss_;
  const std::int64_t& micro_batches_done_;
  const c10::Device device_;
};

}  // namespace orchestrate
