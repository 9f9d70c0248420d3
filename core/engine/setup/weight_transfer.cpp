#include "engine/setup/weight_transfer.h"

#include <fnmatch.h>

#include <filesystem>
#include <map>

#include "checkpoint/checkpoint.h"
#include "checkpoint/model_state.h"
#include "checkpoint/safetensors.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace fs = std::filesystem;

namespace {

// "@logits" is the model's declared logits pattern; anything else a glob.
std::vector<std::string> expand_patterns(const std::vector<std::string>& patterns, const std::string& logits_pattern,
                                         const char* key) {
  std::vector<std::string> out;
  for (const auto& pattern : patterns) {
    if (pattern != "@logits") {
      out.push_back(pattern);
      continue;
    }
    if (logits_pattern.empty())
      throw RecipeError("[checkpoint] " + std::string(key) +
                        ": \"@logits\" stands for the model's logits pattern, and this model declares none; "
                        "name the classifier's tensors with a glob instead (e.g. \"fc.*\")");
    out.push_back(logits_pattern);
  }
  return out;
}

bool matches_any(const std::string& name, const std::vector<std::string>& globs) {
  for (const auto& glob : globs)
    if (::fnmatch(glob.c_str(), name.c_str(), 0) == 0) return true;
  return false;
}

std::string joined(const std::vector<std::string>& items, std::size_t most = 8) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < most; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > most) out += ", ... (" + std::to_string(items.size()) + " in all)";
  return out;
}

}  // namespace

std::string weights_file_of(const std::string& path, const std::string& what) {
  std::error_code error;
  if (!fs::exists(path, error))
    throw RecipeError(what + " \"" + path +
                      "\" does not exist; give an orchestrate checkpoint directory or a .safetensors file");
  if (fs::is_directory(path, error)) {
    read_checkpoint_meta(path);  // refuses incomplete, damaged or newer checkpoints
    return (fs::path(path) / kWeightsFile).string();
  }
  if (fs::path(path).extension() != ".safetensors")
    throw RecipeError(what + " \"" + path +
                      "\" is neither a checkpoint directory nor a .safetensors file; convert PyTorch .pth "
                      "state_dicts with scripts/pth_to_safetensors");
  return path;
}

std::string WeightsFit::problems() const {
  std::string text;
  if (!mismatched.empty()) text += "shape mismatch: " + joined(mismatched) + "; ";
  if (!missing.empty()) text += "missing from the file: " + joined(missing) + "; ";
  if (!unexpected.empty()) text += "not in the model: " + joined(unexpected) + "; ";
  if (!text.empty()) text.resize(text.size() - 2);
  return text;
}

WeightsFit load_fitting_weights(torch::nn::Module& model, const std::string& file,
                                const std::vector<std::string>& exclude) {
  WeightsFit fit;
  const NamedTensors saved = read_safetensors(file);
  std::map<std::string, const at::Tensor*> by_name;
  for (const auto& [name, tensor] : saved.tensors) by_name[name] = &tensor;

  at::NoGradGuard no_grad;
  auto load_into = [&](const std::string& name, at::Tensor tensor) {
    const auto it = by_name.find(name);
    if (matches_any(name, exclude)) {
      fit.records.push_back({name, shape_text(tensor.sizes()), "excluded", ""});
    } else if (it == by_name.end()) {
      fit.records.push_back({name, shape_text(tensor.sizes()), "missing", "not in " + file});
      fit.missing.push_back(name);
    } else if (it->second->sizes() != tensor.sizes()) {
      const std::string detail = "file " + shape_text(it->second->sizes()) + ", model " + shape_text(tensor.sizes());
      fit.records.push_back({name, shape_text(tensor.sizes()), "mismatched", detail});
      fit.mismatched.push_back("'" + name + "' (" + detail + ")");
    } else {
      // copy_ keeps the live tensor's device and memory format (channels_last).
      tensor.copy_(*it->second);
      fit.records.push_back({name, shape_text(tensor.sizes()), "loaded", ""});
    }
    if (it != by_name.end()) by_name.erase(it);
  };
  for (const auto& item : model.named_parameters(/*recurse=*/true)) load_into(item.key(), item.value());
  for (const auto& item : model.named_buffers(/*recurse=*/true)) load_into(item.key(), item.value());
  for (const auto& [name, tensor] : by_name) {
    if (matches_any(name, exclude)) {
      fit.records.push_back({name, shape_text(tensor->sizes()), "excluded", "in " + file + " only"});
      continue;
    }
    fit.records.push_back({name, shape_text(tensor->sizes()), "unexpected", "in " + file + ", not in the model"});
    fit.unexpected.push_back(name);
  }
  return fit;
}

std::vector<TensorRecord> initialize_from(torch::nn::Module& model, const CheckpointSettings& settings,
                                          const std::string& logits_pattern) {
  if (settings.init_from.empty()) return {};
  const std::string file = weights_file_of(settings.init_from, "[checkpoint] init_from =");
  WeightsFit fit = load_fitting_weights(model, file, expand_patterns(settings.exclude, logits_pattern, "exclude"));
  if (settings.strict && !fit.complete())
    throw RecipeError("[checkpoint] init_from = \"" + settings.init_from + "\": " + fit.problems() +
                      "; exclude those tensors (\"@logits\" names the classifier head) or set strict = false");
  return std::move(fit.records);
}

std::vector<TensorRecord> freeze_parameters(torch::nn::Module& model, const CheckpointSettings& settings,
                                            const std::string& logits_pattern) {
  std::vector<TensorRecord> records;
  if (settings.trainable.empty() && settings.frozen.empty()) return records;
  const bool by_trainable = !settings.trainable.empty();
  const auto patterns = expand_patterns(by_trainable ? settings.trainable : settings.frozen, logits_pattern,
                                        by_trainable ? "trainable" : "frozen");
  std::vector<bool> used(patterns.size(), false);
  for (auto& item : model.named_parameters(/*recurse=*/true)) {
    bool matched = false;
    for (std::size_t i = 0; i < patterns.size(); ++i)
      if (::fnmatch(patterns[i].c_str(), item.key().c_str(), 0) == 0) matched = used[i] = true;
    if (matched == by_trainable) continue;
    item.value().set_requires_grad(false);
    records.push_back({item.key(), shape_text(item.value().sizes()), "frozen", ""});
  }
  for (std::size_t i = 0; i < patterns.size(); ++i)
    if (!used[i])
      throw RecipeError(std::string("[checkpoint] ") + (by_trainable ? "trainable" : "frozen") + ": pattern \"" +
                        patterns[i] + "\" matches no parameter of the model; `orchestrate weights list` shows names");
  return records;
}

}  // namespace orchestrate
