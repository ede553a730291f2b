#ifndef STOKER_COMMON_COUNTER_RNG_H_
#define STOKER_COMMON_COUNTER_RNG_H_

// The one random number generator of Stoker: counter-based, so that a value depends only on
// (key, counter) and never on which thread or worker asks. Epoch plans and per-sample
// augmentation must stay identical across versions and machines, so the algorithm is fixed:
//
//   Mix64(z):  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
//              z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
//              return z ^ (z >> 31);                      (SplitMix64's finalizer)
//   KeyOf(a, b, c) = Mix64(Mix64(Mix64(a + G) ^ b + G) ^ c + G)  with G = 0x9E3779B97F4A7C15
//   value i of stream `key` = Mix64(key + (i + 1) * G)
//
// Uniform integers in [0, bound) use Lemire's multiply-shift with rejection (the rejected draws
// consume counters, deterministically). Uniform floats take the top 24 bits (float) or 53 bits
// (double) of a draw. Changing any of this changes every plan: don't.

#include <cstdint>

namespace stoker {

inline constexpr uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ULL;

constexpr uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

constexpr uint64_t KeyOf(uint64_t a, uint64_t b, uint64_t c) {
  return Mix64((Mix64((Mix64(a + kGoldenGamma) ^ b) + kGoldenGamma) ^ c) + kGoldenGamma);
}

// A stream of draws for one key. Thread-compatible; cheap to copy.
class CounterRng {
 public:
  explicit CounterRng(uint64_t key) : key_(key) {}
  CounterRng(uint64_t a, uint64_t b, uint64_t c) : key_(KeyOf(a, b, c)) {}

  uint64_t NextU64() { return Mix64(key_ + (++counter_) * kGoldenGamma); }

  // Uniform in [0, bound). REQUIRES: bound > 0.
  uint64_t UniformInt(uint64_t bound) {
    unsigned __int128 m = static_cast<unsigned __int128>(NextU64()) * bound;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < bound) {
      const uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(NextU64()) * bound;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Uniform in [0, 1).
  float UniformFloat() { return static_cast<float>(NextU64() >> 40) * 0x1.0p-24f; }
  double UniformDouble() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }

  // Uniform in [lo, hi).
  float UniformFloat(float lo, float hi) { return lo + (hi - lo) * UniformFloat(); }

  uint64_t counter() const { return counter_; }

 private:
  uint64_t key_;
  uint64_t counter_ = 0;
};

// Domain tags keep the plan's and the samples' streams apart.
inline constexpr uint64_t kPlanDomain = 0x706C616E;      // "plan"
inline constexpr uint64_t kContentDomain = 0x64617461;   // "data": synthetic pixels, per index
inline constexpr uint64_t kAugmentDomain = 0x61756720;   // "aug ": per (epoch, sample)
inline constexpr uint64_t kBatchMixDomain = 0x6D697820;  // "mix ": per (epoch, batch)

// The RNG a sample's augmentation draws from: rng(seed, epoch, sample_index)
// (docs/architecture.md, Work model).
inline CounterRng SampleRng(uint64_t seed, uint32_t epoch, uint64_t sample_index) {
  return CounterRng(KeyOf(seed ^ kAugmentDomain, epoch, sample_index));
}

}  // namespace stoker

#endif  // STOKER_COMMON_COUNTER_RNG_H_
