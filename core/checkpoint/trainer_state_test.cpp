// The checkpoint's trainer state: parts registered by name round-trip
// through the file, a missing section is refused or skipped as the part
// asks, and a file of the older format is refused in one line naming both.
#include "checkpoint/trainer_state.h"

#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>
#include <torch/serialize/output-archive.h>
#include <torch/torch.h>

#include <fstream>
#include <sstream>

#include "checkpoint/state_adapters.h"
#include "orchestrate/error.h"
#include "orchestrate/testing/error_text.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate {
namespace {

using testing::error_of;
using testing::ScratchDir;

// A LibTorch archive's bytes as a process on `device` would have saved
// them: each tensor's device in the pickle ("cpu") rewritten, the rest
// copied record by record. A CPU machine cannot make CUDA tensors to save.
std::string as_if_saved_on(const std::string& archive, const std::string& device) {
  std::istringstream in(archive);
  caffe2::serialize::PyTorchStreamReader reader(&in);
  std::string out;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, std::size_t size) {
    out.append(static_cast<const char*>(data), size);
    return size;
  });
  // LibTorch's pickler writes a string as BINUNICODE: 'X', its length in 4
  // bytes (little-endian), its bytes; later tensors refer back to it.
  const auto binunicode = [](const std::string& text) {
    return std::string("X") + static_cast<char>(text.size()) + std::string(3, '\0') + text;
  };
  const std::string cpu = binunicode("cpu");
  const std::string other = binunicode(device);
  int rewritten = 0;
  for (const auto& name : reader.getAllRecords()) {
    if (name == ".data/version" || name == "version" || name == ".data/serialization_id") continue;  // the writer's own
    auto [data, size] = reader.getRecord(name);
    std::string bytes(static_cast<const char*>(data.get()), size);
    if (name.size() >= 8 && name.compare(name.size() - 8, 8, "data.pkl") == 0) {
      for (auto at = bytes.find(cpu); at != std::string::npos; at = bytes.find(cpu, at + other.size())) {
        bytes.replace(at, cpu.size(), other);
        ++rewritten;
      }
    }
    writer.writeRecord(name, bytes.data(), bytes.size());
  }
  writer.writeEndOfFile();
  EXPECT_GT(rewritten, 0) << "no tensor's device was found in the pickle";
  return out;
}

// A part with one counter, as a hook plugin keeps one.
class Counter : public Stateful {
 public:
  std::int64_t value = 0;
  StateDict state_dict() const override { return {{"value", at::scalar_tensor(value, at::kLong)}}; }
  void load_state_dict(const StateDict& state) override { value = state.at("value").item<std::int64_t>(); }
};

// A part that keeps nothing: no section is written for it.
class Stateless : public Stateful {};

std::string written(const ScratchDir& dir, const std::string& bytes) {
  const std::string path = dir.file("trainer.pt");
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(TrainerState, EachPartGetsItsOwnSectionBack) {
  Counter a, b;
  a.value = 7;
  b.value = 11;
  TrainerState saving;
  saving.add("a", a);
  saving.add("hooks.0.counter", b);
  ScratchDir dir;
  const auto path = written(dir, saving.save());

  Counter a2, b2;
  TrainerState loading;
  loading.add("hooks.0.counter", b2);  // registration order does not matter
  loading.add("a", a2);
  loading.load(path);
  EXPECT_EQ(a2.value, 7);
  EXPECT_EQ(b2.value, 11);
}

// Every part's state comes back on the CPU, as orchestrate/stateful.h
// promises, also from a checkpoint a GPU run saved: it resumes on a machine
// without one, and each rank takes rank 0's file.
TEST(TrainerState, StateSavedOnAGpuComesBackOnTheCpu) {
  Counter a;
  a.value = 7;
  TrainerState saving;
  saving.add("a", a);
  ScratchDir dir;
  const auto path = written(dir, as_if_saved_on(saving.save(), "cuda:0"));
  Counter loaded;
  TrainerState loading;
  loading.add("a", loaded);
  loading.load(path);
  EXPECT_EQ(loaded.value, 7);
}

TEST(TrainerState, AMissingSectionIsRefusedOnlyWhenThePartNeedsIt) {
  Counter saved;
  TrainerState saving;
  saving.add("a", saved);
  ScratchDir dir;
  const auto path = written(dir, saving.save());

  Counter fresh;
  fresh.value = 3;
  TrainerState lenient;
  lenient.add("new_hook", fresh);
  lenient.load(path);
  EXPECT_EQ(fresh.value, 3) << "a part the checkpoint has no state of keeps its own";

  TrainerState strict;
  strict.add("dim_reduce", fresh, TrainerState::IfAbsent::refuse);
  const auto message = error_of([&] { strict.load(path); });
  EXPECT_NE(message.find("holds no state of 'dim_reduce'"), std::string::npos) << message;
  EXPECT_NE(message.find("resume with the recipe it was saved with"), std::string::npos) << message;
}

TEST(TrainerState, APartWithNothingToKeepWritesNoSection) {
  Stateless nothing;
  TrainerState saving;
  saving.add("nothing", nothing);
  ScratchDir dir;
  const auto path = written(dir, saving.save());
  Counter needs;
  TrainerState loading;
  loading.add("nothing", needs, TrainerState::IfAbsent::refuse);
  EXPECT_THROW(loading.load(path), Error);
}

TEST(TrainerState, AFormatOneFileIsRefusedNamingBothFormats) {
  torch::serialize::OutputArchive old;  // the keys the central writer used
  old.write("skipped_updates", at::scalar_tensor(0, at::kLong));
  old.write("eval_seconds", at::scalar_tensor(0.0, at::kDouble));
  std::ostringstream bytes;
  old.save_to(bytes);
  ScratchDir dir;
  const auto path = written(dir, bytes.str());
  Counter part;
  TrainerState loading;
  loading.add("a", part);
  const auto message = error_of([&] { loading.load(path); });
  EXPECT_NE(message.find("trainer state of format 1"), std::string::npos) << message;
  EXPECT_NE(message.find("reads format 2"), std::string::npos) << message;
  EXPECT_NE(message.find("[checkpoint] init_from"), std::string::npos) << message;
}

TEST(TrainerState, ADamagedFileAndARefusingPartAreNamed) {
  ScratchDir dir;
  const auto damaged = written(dir, "not an archive");
  TrainerState state;
  Counter part;
  state.add("a", part);
  EXPECT_NE(error_of([&] { state.load(damaged); }).find("is damaged"), std::string::npos);

  class Refusing : public Stateful {
   public:
    StateDict state_dict() const override { return {{"x", at::zeros({2})}}; }
    void load_state_dict(const StateDict&) override { throw Error("the shapes differ"); }
  } refusing;
  TrainerState saving;
  saving.add("wrappers.0", refusing);
  const auto path = written(dir, saving.save());
  const auto message = error_of([&] { saving.load(path); });
  EXPECT_NE(message.find("wrappers.0 cannot take its state back from"), std::string::npos) << message;
  EXPECT_NE(message.find("the shapes differ"), std::string::npos) << message;
}

TEST(TrainerState, TwoPartsUnderOneNameAreABug) {
  Counter a, b;
  TrainerState state;
  state.add("a", a);
  EXPECT_THROW(state.add("a", b), Error);
}

// The optimizer's section is its LibTorch archive: SGD with momentum,
// restored into a fresh optimizer, takes the same next step.
TEST(StateAdapters, AnOptimizerRestoredFromItsSectionStepsTheSame) {
  torch::manual_seed(0);
  auto w1 = torch::randn({4}, torch::requires_grad());
  auto w2 = w1.detach().clone().requires_grad_();
  torch::optim::SGD first({w1}, torch::optim::SGDOptions(0.1).momentum(0.9));
  for (int i = 0; i < 3; ++i) {
    first.zero_grad();
    (w1 * w1).sum().backward();
    first.step();
  }
  torch::optim::SGD second({w2}, torch::optim::SGDOptions(0.1).momentum(0.9));
  {
    torch::NoGradGuard no_grad;
    w2.copy_(w1);
  }
  OptimizerState saved(first);
  OptimizerState restored(second);
  restored.load_state_dict(saved.state_dict());
  for (auto* pair : {&first, &second}) {
    pair->zero_grad();
    auto& w = pair == &first ? w1 : w2;
    (w * w).sum().backward();
    pair->step();
  }
  EXPECT_TRUE(w1.equal(w2)) << "the momentum buffer came back";
}

// The state goes to the parameters' device, wherever it was saved: only
// rank 0 saves, for every rank, and a GPU run may resume on the CPU.
TEST(StateAdapters, AnOptimizersStateSavedOnAGpuIsRestoredOnItsParametersDevice) {
  auto w = torch::ones({4}, torch::requires_grad());
  torch::optim::SGD saver({w}, torch::optim::SGDOptions(0.1).momentum(0.9));
  (w * w).sum().backward();
  saver.step();
  StateDict section = OptimizerState(saver).state_dict();
  section["archive"] = bytes_as_tensor(as_if_saved_on(tensor_as_bytes(section.at("archive")), "cuda:0"));
  auto v = torch::ones({4}, torch::requires_grad());
  torch::optim::SGD loader({v}, torch::optim::SGDOptions(0.1).momentum(0.9));
  OptimizerState(loader).load_state_dict(section);
  const auto& state = static_cast<const torch::optim::SGDParamState&>(*loader.state().begin()->second);
  EXPECT_EQ(state.momentum_buffer().device(), torch::Device(torch::kCPU));
  EXPECT_TRUE(state.momentum_buffer().equal(static_cast<const torch::optim::SGDParamState&>(
                                                *saver.state().begin()->second)
                                                .momentum_buffer()));
}

TEST(StateAdapters, TheGeneratorsReplayTheSameNumbers) {
  RandomGenerators generators;
  torch::manual_seed(5);
  const auto state = generators.state_dict();
  const auto first = torch::rand({8});
  torch::manual_seed(99);
  generators.load_state_dict(state);
  EXPECT_TRUE(torch::rand({8}).equal(first));
  EXPECT_THROW(generators.load_state_dict({}), Error) << "no CPU state";
}

TEST(StateAdapters, APartialUpdateKeepsGradientsOnlyBetweenMicroBatches) {
  auto w = torch::ones({3}, torch::requires_grad());
  (w * 2).sum().backward();
  std::vector<at::Tensor> parameters{w};
  at::Tensor loss = torch::tensor(1.5);
  std::int64_t micro_batches_done = 0;
  PartialUpdate part(parameters, loss, micro_batches_done, c10::kCPU);
  EXPECT_TRUE(part.state_dict().empty()) << "at an update's end there is nothing to keep";
  micro_batches_done = 2;
  const auto state = part.state_dict();
  ASSERT_EQ(state.size(), 2U);

  auto fresh = torch::ones({3}, torch::requires_grad());
  std::vector<at::Tensor> fresh_parameters{fresh};
  at::Tensor fresh_loss;
  std::int64_t zero = 0;
  PartialUpdate restored(fresh_parameters, fresh_loss, zero, c10::kCPU);
  restored.load_state_dict(state);
  ASSERT_TRUE(fresh.grad().defined());
  EXPECT_TRUE(fresh.grad().equal(w.grad()));
  EXPECT_EQ(fresh_loss.item<double>(), 1.5);
}

}  // namespace
}  // namespace orchestrate
