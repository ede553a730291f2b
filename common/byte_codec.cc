#include "common/byte_codec.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/crc32c.h"

namespace stoker {
namespace {

uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

absl::Status CutShort(size_t have, size_t need) {
  return absl::OutOfRangeError(
      absl::StrCat("frame cut short: ", have, " bytes of the ", need, " it needs"));
}

}  // namespace

uint32_t FrameChecksumOf(FrameChecksum checksum, absl::Span<const uint8_t> payload) {
  if (checksum == FrameChecksum::kPayload) return Crc32c(payload.data(), payload.size());
  std::string length_bytes;
  AppendLittleEndian(static_cast<uint32_t>(payload.size()), &length_bytes);
  const uint32_t crc = Crc32c(length_bytes.data(), length_bytes.size());
  return MaskCrc(Crc32cExtend(crc, payload.data(), payload.size()));
}

absl::Status ReadFrame(FrameChecksum checksum, absl::Span<const uint8_t> in, uint32_t max_length,
                       absl::Span<const uint8_t>* payload) {
  ByteReader reader(in);
  uint32_t length = 0, stored = 0;
  if (!reader.Read(&length) || !reader.Read(&stored)) {
    return CutShort(in.size(), kFrameHeaderBytes);
  }
  if (length > max_length) {
    return absl::DataLossError(absl::StrCat("length ", length, " above the limit"));
  }
  if (!reader.ReadBytes(length, payload)) return CutShort(in.size(), kFrameHeaderBytes + length);
  if (FrameChecksumOf(checksum, *payload) != stored) return absl::DataLossError("crc mismatch");
  return absl::OkStatus();
}

}  // namespace stoker
