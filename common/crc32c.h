#ifndef STOKER_COMMON_CRC32C_H_
#define STOKER_COMMON_CRC32C_H_

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF),
// the checksum of shard records and journal records. Crc32c("123456789") == 0xE3069283.
// Uses the SSE4.2 crc32 instruction when the CPU has it (checked once at run time), otherwise a
// table-driven slicing-by-8 loop; both give the same result. Thread-safe.

#include <cstddef>
#include <cstdint>

namespace stoker {

// Extends `crc` (the value returned for the preceding bytes; 0 for none) over `data[0, n)`.
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n);

inline uint32_t Crc32c(const void* data, size_t n) { return Crc32cExtend(0, data, n); }

// The portable path alone, for tests that compare both paths.
uint32_t Crc32cExtendPortable(uint32_t crc, const void* data, size_t n);

}  // namespace stoker

#endif  // STOKER_COMMON_CRC32C_H_
