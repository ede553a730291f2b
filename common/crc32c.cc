#include "common/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>
#endif

namespace stoker {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // Reflected Castagnoli.

// kTables[k][b]: the CRC of byte b followed by k zero bytes (slicing-by-8).
using Tables = std::array<std::array<uint32_t, 256>, 8>;

Tables MakeTables() {
  Tables tables{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    tables[0][b] = crc;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      tables[k][b] = (tables[k - 1][b] >> 8) ^ tables[0][tables[k - 1][b] & 0xFF];
    }
  }
  return tables;
}

const Tables& GetTables() {
  static const Tables tables = MakeTables();
  return tables;
}

// Works on the internal (pre-inverted) state.
uint32_t PortableState(uint32_t state, const uint8_t* p, size_t n) {
  const Tables& t = GetTables();
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t lo;
    uint32_t hi;
    std::memcpy(&lo, p, 4);  // Little-endian hosts only (x86-64, aarch64).
    std::memcpy(&hi, p + 4, 4);
    lo ^= state;
    state = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
            t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
  }
  for (; n > 0; --n, ++p) state = (state >> 8) ^ t[0][(state ^ *p) & 0xFF];
  return state;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t HardwareState(uint32_t state, const uint8_t* p,
                                                         size_t n) {
  uint64_t state64 = state;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    state64 = _mm_crc32_u64(state64, word);
  }
  uint32_t state32 = static_cast<uint32_t>(state64);
  for (; n > 0; --n, ++p) state32 = _mm_crc32_u8(state32, *p);
  return state32;
}

bool CpuHasSse42() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  return (ecx & bit_SSE4_2) != 0;
}
#endif

}  // namespace

uint32_t Crc32cExtendPortable(uint32_t crc, const void* data, size_t n) {
  return ~PortableState(~crc, static_cast<const uint8_t*>(data), n);
}

uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n) {
#if defined(__x86_64__)
  static const bool has_sse42 = CpuHasSse42();
  if (has_sse42) return ~HardwareState(~crc, static_cast<const uint8_t*>(data), n);
#endif
  return Crc32cExtendPortable(crc, data, n);
}

}  // namespace stoker
