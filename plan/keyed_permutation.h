#ifndef STOKER_PLAN_KEYED_PERMUTATION_H_
#define STOKER_PLAN_KEYED_PERMUTATION_H_

// A keyed pseudo-random bijection on [0, n), computed one index at a time in O(1) memory: the
// shuffle behind every epoch plan (plan/epoch_plan.h). Plans must never change across versions
// or machines, so the algorithm is fixed:
//
//   Domain: 2^(2h) with h >= 1 the smallest such that 2^(2h) >= n (so the domain is < 4n when
//   n > 1); an index x splits into halves L = x >> h and R = x & (2^h - 1).
//   Round keys: k_0..k_5 are the first six NextU64() draws of CounterRng(key).
//   Round i (i = 0..5):  (L, R) <- (R, L ^ (Mix64(R ^ k_i) & (2^h - 1)))
//   E(x) = L * 2^h + R after the six rounds (a balanced Feistel network: a bijection of the
//   domain whatever the round function).
//   Cycle walking: P(x) = the first of E(x), E(E(x)), ... that is below n. Since E permutes the
//   domain, P permutes [0, n); the expected number of E per lookup is at most domain / n < 4.
//   Inverse(y) walks the same cycle backwards with the rounds undone in reverse order.
//   n <= 1: P is the identity.

#include <array>
#include <cstdint>

namespace stoker {

// Immutable, thread-safe, cheap to copy (64 bytes).
class KeyedPermutation {
 public:
  KeyedPermutation(uint64_t n, uint64_t key);

  uint64_t size() const { return n_; }
  // P(x). REQUIRES: x < size().
  uint64_t operator()(uint64_t x) const;
  // The x with P(x) == y. REQUIRES: y < size().
  uint64_t Inverse(uint64_t y) const;

 private:
  static constexpr int kRounds = 6;

  uint64_t Encrypt(uint64_t x) const;
  uint64_t Decrypt(uint64_t y) const;

  uint64_t n_;
  int half_bits_ = 0;
  uint64_t half_mask_ = 0;
  std::array<uint64_t, kRounds> round_keys_{};
};

}  // namespace stoker

#endif  // STOKER_PLAN_KEYED_PERMUTATION_H_
