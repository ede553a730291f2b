#ifndef STOKER_DATA_SHARD_FORMAT_H_
#define STOKER_DATA_SHARD_FORMAT_H_

// The stoker shard file format, version 1 (docs/shard_format.md has the full description).
// All integers little-endian, written and read with common/byte_codec.h; a record's
// body_len | crc32c(body) | body is its frame with FrameChecksum::kPayload.
//
//   file header  16 bytes   "STOKSHRD" | version u32 (1) | flags u32 (0)
//   record*                 "SREC" u32 | body_len u32 | crc32c(body) u32 | body
//        body               key_len u16 | meta_len u32 | label i64 | key | metadata | data
//   index                   "SIDX" u32 | count × (record offset u64, record length u32)
//   trailer      32 bytes   index_offset u64 | count u64 | crc32c(index) u32 | version u32 |
//                           "STOKSEND"
//
// A record's length counts its 12-byte header. The trailer makes every record reachable with one
// read; a shard whose trailer is missing or damaged (a truncated copy) is recovered by scanning
// records from the start (data/shard_reader.h).

#include <cstddef>
#include <cstdint>

namespace stoker {
namespace shard_format {

inline constexpr char kFileMagic[8] = {'S', 'T', 'O', 'K', 'S', 'H', 'R', 'D'};
inline constexpr char kTrailerMagic[8] = {'S', 'T', 'O', 'K', 'S', 'E', 'N', 'D'};
inline constexpr uint32_t kRecordMagic = 0x43455253;  // "SREC"
inline constexpr uint32_t kIndexMagic = 0x58444953;   // "SIDX"
inline constexpr uint32_t kVersion = 1;

inline constexpr size_t kFileHeaderSize = 16;
inline constexpr size_t kRecordHeaderSize = 12;
inline constexpr size_t kBodyPrefixSize = 14;  // key_len + meta_len + label.
inline constexpr size_t kIndexEntrySize = 12;
inline constexpr size_t kTrailerSize = 32;
// Records larger than this are refused by the writer and treated as damage by the reader.
inline constexpr uint32_t kMaxRecordBody = 1u << 30;

}  // namespace shard_format
}  // namespace stoker

#endif  // STOKER_DATA_SHARD_FORMAT_H_
