#include "training_state.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <torch/cuda.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <sstream>

#include "orchestrate/error.h"

namespace orchestrate {

namespace {

// The default generator of every device this process uses: the CPU one
// (weight init, dropout on CPU) and each CUDA device's.
std::vector<std::pair<std::string, at::Generator>> default_generators() {
  std::vector<std::pair<std::string, at::Generator>> out{{"rng.cpu", at::detail::getDefaultCPUGenerator()}};
  const auto cuda_devices = static_cast<int>(torch::cuda::device_count());
  for (int i = 0; i < cuda_devices; ++i)
    out.emplace_back("rng.cuda." + std::to_string(i),
                     at::globalContext().defaultGenerator(c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(i))));
  return out;
}

}  // namespace

NamedTensors model_state(const torch::nn::Module& model) {
  NamedTensors out;
  for (const auto& item : model.named_parameters(/*recurse=*/true)) out.tensors.emplace_back(item.key(), item.value().detach());
  for (const auto& item : model.named_buffers(/*recurse=*/true)) out.tensors.emplace_back(item.key(), item.value().detach());
  return out;
}

void load_model_state(torch::nn::Module& model, const NamedTensors& weights, const std::string& source) {
  std::map<std::string, const at::Tensor*> saved;
  for (const auto& [name, tensor] : weights.tensors) saved[name] = &tensor;
  at::NoGradGuard no_grad;
  const auto live = model_state(model);
  for (const auto& [name, tensor] : live.tensors) {
    auto it = saved.find(name);
    if (it == saved.end())
      throw Error(source + " has no tensor '" + name + "' of this model: it was saved from another model");
    if (it->second->sizes() != tensor.sizes())
      throw Error(source + ": tensor '" + name + "' has shape " + shape_text(it->second->sizes()) + ", the model's is " +
                  shape_text(tensor.sizes()) + ": it was saved from another model configuration");
    // copy_ keeps the live tensor's device and memory format (channels_last).
    const_cast<at::Tensor&>(tensor).copy_(*it->second);
    saved.erase(it);
  }
  if (!saved.empty())
    throw Error(source + " holds tensor '" + saved.begin()->first + "' that this model does not have (" +
                std::to_string(saved.size()) + " such): it was saved from another model");
}

at::Tensor flatten_state(const std::map<std::string, at::Tensor>& state) {
  std::vector<at::Tensor> flat;
  for (const auto& [name, tensor] : state) flat.push_back(tensor.detach().reshape({-1}));
  return flat.empty() ? at::Tensor(at::empty({0})) : at::cat(flat);
}

std::map<std::string, at::Tensor> unflatten_state(const at::Tensor& flat,
                                                  const std::map<std::string, at::Tensor>& like) {
  std::int64_t expected = 0;
  for (const auto& [name, tensor] : like) expected += tensor.numel();
  if (flat.numel() != expected)
    throw Error("the checkpoint's gradient-compression state has " + std::to_string(flat.numel()) +
                " values where this recipe's compressor keeps " + std::to_string(expected) +
                "; resume with the [gradient_compression] settings it was saved with");
  std::map<std::string, at::Tensor> out;
  std::int64_t at = 0;
  for (const auto& [name, tensor] : like) {
    out[name] = flat.narrow(0, at, tensor.numel()).view(tensor.sizes());
    at += tensor.numel();
  }
  return out;
}

std::string save_trainer_state(const TrainerStateRefs& s, bool with_gradients) {
  torch::serialize::OutputArchive archive;
  {
    torch::serialize::OutputArchive optimizer;
    s.optimizer.save(optimizer);
    archive.write("optimizer", optimizer);
  }
  for (std::size_t i = 0; i < s.wrappers.size(); ++i) {
    torch::serialize::OutputArchive wrapper;
    s.wrappers[i]->save(wrapper);
    archive.write("wrapper." + std::to_string(i), wrapper);
  }
  {
    torch::serialize::OutputArchive scaler;
    s.scaler.save(scaler);
    archive.write("scaler", scaler);
  }
  for (auto& [key, generator] : default_generators()) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    archive.write(key, generator.get_state());
  }
  if (with_gradients) {
    for (std::size_t i = 0; i < s.parameters.size(); ++i)
      if (s.parameters[i].grad().defined()) archive.write("grad." + std::to_string(i), s.parameters[i].grad());
    if (s.partial_loss.defined()) archive.write("partial_loss", s.partial_loss);
  }
  for (std::size_t r = 0; r < s.compression_by_rank.size(); ++r)
    archive.write("compression.rank" + std::to_string(r), s.compression_by_rank[r]);
  for (const auto& [name, tensor] : s.dim_reduce_state) archive.write("dim_reduce." + name, tensor);
  archive.write("skipped_updates", at::tensor(s.skipped_updates, at::kLong));
  archive.write("eval_seconds", at::tensor(s.eval_seconds, at::kDouble));
  for (const auto& [name, part] : s.parts) {
    torch::serialize::OutputArchive section;
    for (const auto& [key, tensor] : part->state_dict()) section.write(key, tensor.detach());
    archive.write("part." + name, section);
  }
  std::ostringstream bytes;
  archive.save_to(bytes);
  return bytes.str();
}

void load_trainer_state(const std::string& path, const TrainerStateRefs& s, bool with_gradients) {
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
    {
      torch::serialize::InputArchive optimizer;
      archive.read("optimizer", optimizer);
      s.optimizer.load(optimizer);
    }
    for (std::size_t i = 0; i < s.wrappers.size(); ++i) {
      torch::serialize::InputArchive wrapper;
      archive.read("wrapper." + std::to_string(i), wrapper);
      s.wrappers[i]->load(wrapper);
    }
    {
      torch::serialize::InputArchive scaler;
      archive.read("scaler", scaler);
      s.scaler.load(scaler);
    }
    for (auto& [key, generator] : default_generators()) {
      at::Tensor state;
      if (!archive.try_read(key, state)) {
        if (key == "rng.cpu") throw Error(path + " holds no CPU RNG state");
        continue;  // a CUDA device the saving process did not have
      }
      std::lock_guard<std::mutex> lock(generator.mutex());
      generator.set_state(state);
    }
    at::NoGradGuard no_grad;
    if (with_gradients) {
      for (std::size_t i = 0; i < s.parameters.size(); ++i) {
        at::Tensor grad;
        if (!archive.try_read("grad." + std::to_string(i), grad)) continue;
        auto& param = const_cast<at::Tensor&>(s.parameters[i]);
        if (param.grad().defined()) param.mutable_grad().copy_(grad);
        else param.mutable_grad() = grad.to(param.device()).contiguous(param.suggest_memory_format());
      }
      at::Tensor loss;
      if (archive.try_read("partial_loss", loss)) s.partial_loss = loss;
    }
    s.compression_by_rank.clear();
    while (true) {
      at::Tensor state;  // a fresh handle each time: try_read overwrites a defined tensor in place
      if (!archive.try_read("compression.rank" + std::to_string(s.compression_by_rank.size()), state)) break;
      s.compression_by_rank.push_back(state);
    }
    for (auto& [name, tensor] : s.dim_reduce_state) {
      at::Tensor saved;
      if (!archive.try_read("dim_reduce." + name, saved))
        throw Error(path + " holds no dim_reduce state '" + name +
                    "': it was saved by a run without [dim_reduce]; resume with the recipe it was saved with");
      tensor = saved;
    }
    at::Tensor skipped, eval_seconds;
    archive.read("skipped_updates", skipped);
    archive.read("eval_seconds", eval_seconds);
    s.skipped_updates = skipped.item<std::int64_t>();
    s.eval_seconds = eval_seconds.item<double>();
    for (const auto& [name, part] : s.parts) {
      torch::serialize::InputArchive section;
      if (!archive.try_read("part." + name, section)) continue;  // saved before this part kept state
      StateDict state;
      for (const auto& key : section.keys()) {
        at::Tensor tensor;
        section.read(key, tensor);
        state[key] = tensor;
      }
      try {
        part->load_state_dict(state);
      } catch (const std::exception& e) {
        throw Error(name + " cannot take its state back from " + path + ": " + exception_reason(e));
      }
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("checkpoint state " + path + " cannot be restored: " + exception_reason(e) +
                "; it was written by another recipe or is damaged: use another checkpoint");
  }
}

}  // namespace orchestrate
