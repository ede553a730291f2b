#include "plan/keyed_permutation.h"

#include "common/counter_rng.h"

namespace stoker {

KeyedPermutation::KeyedPermutation(uint64_t n, uint64_t key) : n_(n) {
  if (n_ <= 1) return;
  half_bits_ = 1;
  // 2^(2h) >= n; h = 32 covers every uint64 n (the domain is then all of uint64).
  while (half_bits_ < 32 && (uint64_t{1} << (2 * half_bits_)) < n_) ++half_bits_;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  CounterRng rng(key);
  for (uint64_t& round_key : round_keys_) round_key = rng.NextU64();
}

uint64_t KeyedPermutation::Encrypt(uint64_t x) const {
  uint64_t left = x >> half_bits_;
  uint64_t right = x & half_mask_;
  for (const uint64_t round_key : round_keys_) {
    const uint64_t next_right = left ^ (Mix64(right ^ round_key) & half_mask_);
    left = right;
    right = next_right;
  }
  return (left << half_bits_) | right;
}

uint64_t KeyedPermutation::Decrypt(uint64_t y) const {
  uint64_t left = y >> half_bits_;
  uint64_t right = y & half_mask_;
  for (int i = kRounds - 1; i >= 0; --i) {
    const uint64_t previous_left = right ^ (Mix64(left ^ round_keys_[i]) & half_mask_);
    right = left;
    left = previous_left;
  }
  return (left << half_bits_) | right;
}

uint64_t KeyedPermutation::operator()(uint64_t x) const {
  if (n_ <= 1) return x;
  do {
    x = Encrypt(x);
  } while (x >= n_);
  return x;
}

uint64_t KeyedPermutation::Inverse(uint64_t y) const {
  if (n_ <= 1) return y;
  do {
    y = Decrypt(y);
  } while (y >= n_);
  return y;
}

}  // namespace stoker
