#include "checkpoint/trainer_state.h"

#include <ATen/ATen.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <sstream>

#include "orchestrate/error.h"

namespace orchestrate {

void TrainerState::add(std::string name, Stateful& part, IfAbsent if_absent) {
  for (const auto& existing : parts_)
    if (existing.name == name) throw Error("two parts of the run keep state as '" + name + "' (a bug)");
  parts_.push_back(Part{std::move(name), &part, if_absent});
}

void TrainerState::add_owned(std::string name, std::unique_ptr<Stateful> part, IfAbsent if_absent) {
  add(std::move(name), *part, if_absent);
  owned_.push_back(std::move(part));
}

std::string TrainerState::save() const {
  torch::serialize::OutputArchive archive;
  archive.write("format", at::scalar_tensor(kTrainerStateFormat, at::kLong));
  for (const auto& [name, part, if_absent] : parts_) {
    const StateDict state = part->state_dict();
    if (state.empty()) continue;
    torch::serialize::OutputArchive section;
    for (const auto& [key, tensor] : state) section.write(key, tensor.detach());
    archive.write(name, section);
  }
  std::ostringstream bytes;
  archive.save_to(bytes);
  return bytes.str();
}

namespace {

StateDict read_section(torch::serialize::InputArchive& section) {
  StateDict state;
  for (const auto& key : section.keys()) {
    at::Tensor tensor;  // a fresh handle each time: read overwrites a defined tensor in place
    section.read(key, tensor);
    state[key] = tensor;
  }
  return state;
}

void check_format(torch::serialize::InputArchive& archive, const std::string& path) {
  at::Tensor format;
  if (!archive.try_read("format", format))
    throw Error(path + " is trainer state of format 1 (one key per piece of state, written before 2026-11-28); "
                "this orchestrate reads format " + std::to_string(kTrainerStateFormat) +
                " (one section per part): resume it with the orchestrate that saved it, or start a new run from "
                "its weights with [checkpoint] init_from");
  const auto found = format.item<std::int64_t>();
  if (found != kTrainerStateFormat)
    throw Error(path + " is trainer state of format " + std::to_string(found) + "; this orchestrate reads format " +
                std::to_string(kTrainerStateFormat) + ": resume it with the orchestrate that saved it");
}

}  // namespace

void TrainerState::load(const std::string& path) const {
  torch::serialize::InputArchive archive;
  try {
    // On the CPU, as orchestrate/stateful.h promises each part: a GPU run's
    // file then resumes without a GPU, and on another rank's device (each
    // part moves its state where it works; saved as it was, it would come
    // back on the saver's device, or fail where there is none).
    archive.load_from(path, c10::Device(c10::kCPU));
  } catch (const std::exception& e) {
    throw Error("checkpoint state " + path + " cannot be read: " + exception_reason(e) +
                "; it is damaged: use another checkpoint of the run");
  }
  check_format(archive, path);
  for (const auto& [name, part, if_absent] : parts_) {
    StateDict state;
    try {
      torch::serialize::InputArchive section;
      if (!archive.try_read(name, section)) {
        if (if_absent == IfAbsent::refuse)
          throw Error(path + " holds no state of '" + name +
                      "': it was saved by a run without it; resume with the recipe it was saved with");
        continue;
      }
      state = read_section(section);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error("checkpoint state " + path + ": the section '" + name + "' cannot be read: " + exception_reason(e) +
                  "; it is damaged: use another checkpoint of the run");
    }
    try {
      part->load_state_dict(state);
    } catch (const Error& e) {
      throw Error(name + " cannot take its state back from " + path + ": " + e.what());
    } catch (const std::exception& e) {  // LibTorch's, from a mismatched optimizer state
      throw Error(name + " cannot take its state back from " + path + ": " + exception_reason(e) +
                  "; it was saved by another recipe: resume with the recipe it was saved with");
    }
  }
}

}  // namespace orchestrate
