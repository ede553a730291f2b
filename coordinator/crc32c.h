#ifndef STOKER_COORDINATOR_CRC32C_H_
#define STOKER_COORDINATOR_CRC32C_H_

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), table-driven, as used by LevelDB and
// iSCSI. Crc32c("123456789") == 0xE3069283. Thread-safe (pure functions).

#include <cstdint>

#include "absl/strings/string_view.h"

namespace stoker {

uint32_t Crc32c(absl::string_view data);

// LevelDB's mask: a CRC stored next to the data it covers is rotated and offset, so that a
// record holding its own CRC does not checksum to something trivial.
inline uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace stoker

#endif  // STOKER_COORDINATOR_CRC32C_H_
