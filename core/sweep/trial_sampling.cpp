// The trials of a sweep spec: a grid's combinations, or draws from the
// parameters' distributions (std::mt19937_64 for random, Boost.Random's
// Sobol sequence for sobol), reproducible from the spec's seed.
#include <boost/random/sobol.hpp>

#include <cmath>
#include <random>

#include "sweep/sweep_spec.h"
#include "sweep/toml_value_text.h"

namespace orchestrate::sweep {

namespace {

// The value at `u` in [0, 1) of a parameter's distribution, as TOML text.
std::string value_at(const Parameter& parameter, double u) {
  if (!parameter.range) {
    const auto count = parameter.values.size();
    return parameter.values[std::min(count - 1, static_cast<std::size_t>(u * static_cast<double>(count)))];
  }
  const Range& range = *parameter.range;
  switch (range.scale) {
    case Scale::integer: {
      const auto low = static_cast<std::int64_t>(range.low), high = static_cast<std::int64_t>(range.high);
      const auto span = static_cast<double>(high - low + 1);
      return std::to_string(low + std::min(high - low, static_cast<std::int64_t>(u * span)));
    }
    case Scale::log: return real_text(std::exp(std::log(range.low) + u * (std::log(range.high) - std::log(range.low))));
    case Scale::linear: break;
  }
  return real_text(range.low + u * (range.high - range.low));
}

std::vector<Trial> grid(const SweepSpec& spec) {
  std::vector<Trial> trials;
  std::vector<std::size_t> at(spec.parameters.size(), 0);
  for (std::int64_t index = 0; index < spec.trials; ++index) {
    Trial trial{index, {}};
    for (std::size_t p = 0; p < spec.parameters.size(); ++p)
      trial.overrides.emplace_back(spec.parameters[p].key, spec.parameters[p].values[at[p]]);
    trials.push_back(std::move(trial));
    for (std::size_t p = spec.parameters.size(); p-- > 0;) {  // the last parameter varies fastest
      if (++at[p] < spec.parameters[p].values.size()) break;
      at[p] = 0;
    }
  }
  return trials;
}

}  // namespace

std::vector<Trial> sample_trials(const SweepSpec& spec) {
  if (spec.sampler == Sampler::grid) return grid(spec);
  const std::size_t dimensions = spec.parameters.size();
  std::mt19937_64 random(spec.seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  // Sobol: the sequence from its first point, 0 (which Boost's engine skips),
  // so that the first 2^k trials are a net: 16 trials, one in each sixteenth
  // of every range. Another seed shifts every point by one random offset per
  // dimension, modulo 1 (a Cranley-Patterson rotation), which keeps that.
  std::optional<boost::random::sobol> sobol;
  std::vector<double> offset(dimensions, 0.0);
  if (spec.sampler == Sampler::sobol) {
    sobol.emplace(dimensions);
    if (spec.seed != 0)
      for (double& shift : offset) shift = uniform(random);
  }
  std::vector<Trial> trials;
  for (std::int64_t index = 0; index < spec.trials; ++index) {
    Trial trial{index, {}};
    for (std::size_t d = 0; d < dimensions; ++d) {
      double u = 0;
      if (!sobol) {
        u = uniform(random);
      } else {
        const double point = index == 0 ? 0.0
                                         : static_cast<double>((*sobol)() - sobol->min()) /
                                               (static_cast<double>(sobol->max() - sobol->min()) + 1.0);
        u = std::fmod(point + offset[d], 1.0);
      }
      trial.overrides.emplace_back(spec.parameters[d].key, value_at(spec.parameters[d], u));
    }
    trials.push_back(std::move(trial));
  }
  return trials;
}

}  // namespace orchestrate::sweep
