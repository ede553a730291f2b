#ifndef STOKER_COMMON_STABLE_FINGERPRINT_H_
#define STOKER_COMMON_STABLE_FINGERPRINT_H_

// A 64-bit fingerprint that is the same in every process, machine and build (FNV-1a over the
// bytes fed, integers little-endian and strings length-prefixed so that fields cannot run into
// each other). absl::Hash is seeded per process and cannot name data shared between workers.
// Not cryptographic: it tells honest inputs apart, it does not resist chosen collisions.
//
// Thread-compatible value type.

#include <cstdint>

#include "absl/strings/string_view.h"

namespace stoker {

class StableFingerprint {
 public:
  StableFingerprint& Add(uint64_t value) {
    for (int byte = 0; byte < 8; ++byte) AddByte(static_cast<uint8_t>(value >> (8 * byte)));
    return *this;
  }
  StableFingerprint& Add(absl::string_view text) {
    Add(uint64_t{text.size()});
    for (char c : text) AddByte(static_cast<uint8_t>(c));
    return *this;
  }
  // Never 0 (0 means "no fingerprint" to callers).
  uint64_t value() const { return hash_ == 0 ? 1 : hash_; }

 private:
  void AddByte(uint8_t byte) { hash_ = (hash_ ^ byte) * 0x100000001b3ull; }

  uint64_t hash_ = 0xcbf29ce484222325ull;
};

}  // namespace stoker

#endif  // STOKER_COMMON_STABLE_FINGERPRINT_H_
