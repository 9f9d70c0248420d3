// The random numbers of one sample's augmentation, drawn from its seed alone
// (SampleRequest::seed), so the same seed gives the same crop, flip and
// jitter on any thread and any machine. splitmix64 is written out here, a
// few lines, because the standard library's distributions may differ between
// implementations and the pixels must not.
#pragma once

#include <cstdint>

namespace orchestrate::preprocessing {

class SampleRandom {
 public:
  explicit SampleRandom(std::uint64_t seed) : state_(seed) {}

  // Numbered streams of one seed that share no draws: stream 0 is
  // SampleRandom(seed); the others start from the seed and the number mixed.
  static SampleRandom stream(std::uint64_t seed, std::uint64_t number) {
    if (number == 0) return SampleRandom(seed);
    SampleRandom mixer(seed ^ (number * 0xd1b54a32d192ed03ULL));
    return SampleRandom(mixer.next());
  }

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [low, high), from the top 53 bits.
  double uniform(double low, double high) {
    return low + (high - low) * static_cast<double>(next() >> 11) * 0x1.0p-53;
  }

  // Uniform in [0, count).
  std::int64_t below(std::int64_t count) {
    return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(count));
  }

 private:
  std::uint64_t state_;
};

}  // namespace orchestrate::preprocessing
