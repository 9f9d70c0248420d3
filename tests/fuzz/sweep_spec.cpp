// A sweep spec: any bytes as the spec file's text, parsed and checked as
// `orchestrate sweep` reads it (size and nesting checks, toml++, every key),
// and, when it passes, its trials drawn. Bad input must surface as
// orchestrate::Error (RecipeError); a spec that passes must sample exactly
// its declared number of trials, each setting every parameter.
#include <cstddef>
#include <cstdint>
#include <string>

#include "orchestrate/error.h"
#include "sweep/sweep_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  orchestrate::sweep::SweepSpec spec;
  try {
    spec = orchestrate::sweep::parse_sweep_spec(text, "fuzz.toml", 4, 1);
  } catch (const orchestrate::Error&) {
    return 0;
  }
  if (spec.trials > 2000) return 0;  // valid, but sampling it is slow for a fuzzer's iteration
  const auto trials = orchestrate::sweep::sample_trials(spec);
  if (static_cast<std::int64_t>(trials.size()) != spec.trials) __builtin_trap();
  for (const auto& trial : trials)
    if (trial.overrides.size() != spec.parameters.size()) __builtin_trap();
  return 0;
}
