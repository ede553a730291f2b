#ifndef STOKER_COMMON_BYTE_CODEC_H_
#define STOKER_COMMON_BYTE_CODEC_H_

// The one encoding under Stoker's binary formats (the journal's records, the shard format, the
// shard cache's footer): fixed-width integers little-endian whatever the host's byte order, read
// back with bounds checks, and CRC-32C-checked frames. Each format keeps its own layout and its
// own error codes; this file only encodes and decodes.
//
// A frame is [u32 length][u32 checksum][length bytes of payload], where the checksum is one of
// FrameChecksum's. Append writes the header only, so that a large payload is written where it
// already is, never copied behind its header.
//
// The functions are thread-safe; a ByteReader is thread-compatible.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace stoker {

template <typename T>
inline constexpr bool kIsFixedWidth =
    std::is_same_v<T, uint16_t> || std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>;

// `bytes` seen as unsigned bytes.
inline absl::Span<const uint8_t> AsBytes(absl::string_view bytes) {
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

// Appends `value` as sizeof(T) little-endian bytes to `out`, a std::string or a
// std::vector<uint8_t>.
template <typename T, typename Bytes>
void AppendLittleEndian(T value, Bytes* out) {
  static_assert(kIsFixedWidth<T>, "uint16_t, uint32_t or uint64_t");
  for (size_t i = 0; i < sizeof(T); ++i) {
    out->push_back(static_cast<typename Bytes::value_type>(uint64_t{value} >> (8 * i)));
  }
}

// Reads little-endian integers and runs of bytes from the front of a buffer it does not own.
// A read that asks for more bytes than remain returns false and consumes nothing.
class ByteReader {
 public:
  explicit ByteReader(absl::Span<const uint8_t> bytes) : bytes_(bytes) {}

  template <typename T>
  bool Read(T* value) {
    static_assert(kIsFixedWidth<T>, "uint16_t, uint32_t or uint64_t");
    if (remaining() < sizeof(T)) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t{bytes_[position_ + i]} << (8 * i);
    *value = static_cast<T>(v);
    position_ += sizeof(T);
    return true;
  }
  // The next `n` bytes, as a view into the buffer.
  bool ReadBytes(size_t n, absl::Span<const uint8_t>* out) {
    if (remaining() < n) return false;
    *out = bytes_.subspan(position_, n);
    position_ += n;
    return true;
  }

  size_t position() const { return position_; }
  size_t remaining() const { return bytes_.size() - position_; }

 private:
  const absl::Span<const uint8_t> bytes_;
  size_t position_ = 0;
};

inline constexpr size_t kFrameHeaderBytes = 8;

enum class FrameChecksum {
  // CRC-32C of the payload (shard records).
  kPayload,
  // LevelDB's masked CRC-32C of the 4 length bytes followed by the payload (journal records):
  // a damaged length is caught too, and a frame holding its own CRC does not checksum to
  // something trivial.
  kMaskedLengthAndPayload,
};

// The checksum a frame of `payload` carries. REQUIRES: payload.size() < 2^32.
uint32_t FrameChecksumOf(FrameChecksum checksum, absl::Span<const uint8_t> payload);

// Appends the header of a frame holding `payload` to `out` (a std::string or a
// std::vector<uint8_t>); the caller writes the payload after it. REQUIRES: payload.size() < 2^32.
template <typename Bytes>
void AppendFrameHeader(FrameChecksum checksum, absl::Span<const uint8_t> payload, Bytes* out) {
  AppendLittleEndian(static_cast<uint32_t>(payload.size()), out);
  AppendLittleEndian(FrameChecksumOf(checksum, payload), out);
}

// Reads the frame at the front of `in` (more may follow it) and points `payload` at its payload
// inside `in`; the frame is kFrameHeaderBytes + payload->size() bytes. Errors, in this order:
//   OUT_OF_RANGE "frame cut short ..." when `in` ends inside the header;
//   DATA_LOSS "length N above the limit" when the length is over `max_length`;
//   OUT_OF_RANGE "frame cut short ..." when `in` ends inside the payload;
//   DATA_LOSS "crc mismatch" when the checksum does not match.
// OUT_OF_RANGE is what a file cut short by a crash looks like (a torn tail); DATA_LOSS is damage.
absl::Status ReadFrame(FrameChecksum checksum, absl::Span<const uint8_t> in, uint32_t max_length,
                       absl::Span<const uint8_t>* payload);

}  // namespace stoker

#endif  // STOKER_COMMON_BYTE_CODEC_H_
