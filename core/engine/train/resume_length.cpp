#include "engine/train/resume_length.h"

#include <charconv>
#include <cstdint>
#include <optional>

#include "engine/setup/components.h"

namespace orchestrate {

namespace {

// A flattened recipe value of the checkpoint: an integer key's TOML text.
std::optional<std::int64_t> integer_param(const CheckpointMeta& checkpoint, const std::string& key) {
  const auto found = checkpoint.recipe_params.find(key);
  if (found == checkpoint.recipe_params.end()) return std::nullopt;
  std::int64_t value = 0;
  const std::string& text = found->second;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The shortest text that reads back as the same double, so two rates that differ print differently.
std::string shortest(double value) {
  char digits[32];
  const auto [end, error] = std::to_chars(digits, digits + sizeof digits, value);
  return error == std::errc() ? std::string(digits, end) : std::to_string(value);
}

}  // namespace

std::string length_change_problem(const CheckpointMeta& checkpoint, const Settings& settings,
                                  const Registry& registry) {
  const auto old_max_steps = integer_param(checkpoint, "run.max_steps");
  const auto old_epochs = integer_param(checkpoint, "run.epochs");
  if (old_max_steps == settings.run.max_steps && old_epochs == settings.run.epochs) return "";
  const std::int64_t per_epoch = checkpoint.updates_per_epoch;
  if (per_epoch <= 0 || !old_max_steps || !old_epochs)
    return "the checkpoint does not record its updates per epoch (saved by an older orchestrate), so the schedule "
           "cannot be compared";
  const std::int64_t before = run_length_in_updates(*old_max_steps, *old_epochs, per_epoch);
  const std::int64_t after = run_length_in_updates(settings.run.max_steps, settings.run.epochs, per_epoch);
  if (before == after) return "";
  const auto old_schedule = build_schedule(settings, registry, per_epoch, before);
  const auto new_schedule = build_schedule(settings, registry, per_epoch, after);
  // Exact: a resume is bit for bit, so any difference is a different trajectory.
  for (std::int64_t update = 0; update < checkpoint.step; ++update) {
    const double was = old_schedule->learning_rate(update);
    const double would_be = new_schedule->learning_rate(update);
    if (was != would_be)
      return "the schedule spans the run, so update " + std::to_string(update + 1) + " of the " +
             std::to_string(checkpoint.step) + " done would have had learning rate " + shortest(would_be) + ", not " +
             shortest(was);
  }
  return "";
}

}  // namespace orchestrate
