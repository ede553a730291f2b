// Fuzz target: compressed batch payloads (common/payload_codec.h) as a client receives them: one
// LZ4 or zstd frame, decoded into a buffer of the size the batch header announced, which a
// faulty or hostile worker chooses (a lie, or the frame's own declared size may lie), and the
// compression names of flags and requests (ParseCompressionChoice).
//
// Input, framed by SplitChunks (fuzz_input.h): control bytes, payload bytes, a compression name.
// Control byte 0: bit 0 picks zstd (else lz4); bit 1 picks the mode:
//   - decode: the payload bytes are the frame, decoded into a buffer of the announced size;
//   - lie: the payload bytes are compressed (zstd level from bits 2-7), the round trip checked,
//     then the frame's declared content size is rewritten to the announced size (the LZ4 header
//     checksum recomputed, so the lie passes the header) and the frame decoded into that size.
// Bytes 1-3: the announced size (little-endian, below 1 MiB).
// Invariants checked: decoding fails only with DATA_LOSS and writes nothing past the buffer
// (ASan); a frame whose content is not the announced size never decodes OK; an honest frame
// decodes to its input; a parsed compression name reads back to the same choice.

#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "common/payload_codec.h"
#include "tests/fuzz/fuzz_input.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

constexpr size_t kMaxAnnounced = size_t{1} << 20;

// xxHash32 (seed 0), for the LZ4 frame's header checksum (liblz4 does not export its own).
uint32_t Xxh32(const uint8_t* p, size_t n) {
  constexpr uint32_t kP1 = 2654435761U, kP2 = 2246822519U, kP3 = 3266489917U, kP4 = 668265263U,
                     kP5 = 374761393U;
  auto rotl = [](uint32_t x, int r) { return (x << r) | (x >> (32 - r)); };
  auto read32 = [](const uint8_t* q) {
    return uint32_t{q[0]} | uint32_t{q[1]} << 8 | uint32_t{q[2]} << 16 | uint32_t{q[3]} << 24;
  };
  const uint8_t* const end = p + n;
  uint32_t h;
  if (n >= 16) {
    uint32_t v[4] = {kP1 + kP2, kP2, 0, 0 - kP1};
    for (; p + 16 <= end; p += 16) {
      for (int i = 0; i < 4; ++i) v[i] = rotl(v[i] + read32(p + 4 * i) * kP2, 13) * kP1;
    }
    h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
  } else {
    h = kP5;
  }
  h += static_cast<uint32_t>(n);
  for (; p + 4 <= end; p += 4) h = rotl(h + read32(p) * kP3, 17) * kP4;
  for (; p < end; ++p) h = rotl(h + *p * kP5, 11) * kP1;
  h ^= h >> 15;
  h *= kP2;
  h ^= h >> 13;
  h *= kP3;
  h ^= h >> 16;
  return h;
}

void PutLittleEndian(uint64_t value, size_t width, uint8_t* out) {
  for (size_t i = 0; i < width; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

// Rewrites an LZ4 frame's content size (magic, FLG, BD, size, [dict id], header checksum).
bool LieLz4(uint64_t size, std::vector<uint8_t>& frame) {
  if (frame.size() < 15 || (frame[4] & 0x08) == 0) return false;
  PutLittleEndian(size, 8, &frame[6]);
  const size_t descriptor_end = 14 + ((frame[4] & 0x01) != 0 ? 4 : 0);
  if (frame.size() <= descriptor_end) return false;
  frame[descriptor_end] = static_cast<uint8_t>(Xxh32(&frame[4], descriptor_end - 4) >> 8);
  return true;
}

// Rewrites a zstd frame's Frame_Content_Size field, in the width its header gives it.
bool LieZstd(uint64_t size, std::vector<uint8_t>& frame) {
  if (frame.size() < 6) return false;
  const uint8_t descriptor = frame[4];
  const bool single_segment = (descriptor & 0x20) != 0;
  constexpr size_t kDictIdBytes[] = {0, 1, 2, 4};
  const size_t offset = 5 + (single_segment ? 0 : 1) + kDictIdBytes[descriptor & 3];
  constexpr size_t kSizeBytes[] = {0, 2, 4, 8};
  const size_t flag = descriptor >> 6;
  const size_t width = flag == 0 ? (single_segment ? 1 : 0) : kSizeBytes[flag];
  if (width == 0 || offset + width > frame.size()) return false;
  if (width == 1 && size > 0xff) return false;
  if (width == 2 && (size < 256 || size > 0xffff + 256)) return false;
  if (width == 4 && size > 0xffffffffu) return false;
  PutLittleEndian(width == 2 ? size - 256 : size, width, &frame[offset]);
  return true;
}

// Decodes into a fresh block of exactly `size` bytes (so ASan sees a write past it).
absl::Status Decode(pb::Compression codec, absl::Span<const uint8_t> frame, size_t size,
                    std::unique_ptr<uint8_t[]>* out) {
  *out = std::make_unique<uint8_t[]>(size);
  const absl::Status status = DecompressPayload(codec, frame, absl::MakeSpan(out->get(), size));
  if (!status.ok()) FUZZ_CHECK(status.code() == absl::StatusCode::kDataLoss);
  return status;
}

void CheckRoundTripAndLie(pb::Compression codec, int level, absl::string_view raw_text,
                          size_t announced) {
  const auto raw =
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(raw_text.data()), raw_text.size());
  pb::CompressionChoice choice;
  choice.set_codec(codec);
  choice.set_level(codec == pb::COMPRESSION_ZSTD ? level : 0);
  FUZZ_CHECK(ValidateCompressionChoice(choice, "fuzz").ok());
  PayloadBuffer encoded;
  FUZZ_CHECK(CompressPayload(choice, raw, &encoded).ok());
  std::vector<uint8_t> frame(encoded.data(), encoded.data() + encoded.size());
  std::unique_ptr<uint8_t[]> out;
  FUZZ_CHECK(Decode(codec, frame, raw.size(), &out).ok());
  FUZZ_CHECK(raw.empty() || std::memcmp(out.get(), raw.data(), raw.size()) == 0);
  FUZZ_CHECK(!Decode(codec, frame, raw.size() + 1, &out).ok());
  if (!raw.empty()) FUZZ_CHECK(!Decode(codec, frame, raw.size() - 1, &out).ok());

  const bool lied =
      codec == pb::COMPRESSION_LZ4 ? LieLz4(announced, frame) : LieZstd(announced, frame);
  if (!lied) return;
  const absl::Status status = Decode(codec, frame, announced, &out);
  if (announced != raw.size()) FUZZ_CHECK(!status.ok());
}

void CheckChoiceName(absl::string_view text) {
  absl::StatusOr<pb::CompressionChoice> choice = ParseCompressionChoice(text, "compression");
  if (!choice.ok()) {
    FUZZ_CHECK(choice.status().code() == absl::StatusCode::kInvalidArgument);
    // The message starts with the field: "compression: ..." or "compression.level: ...".
    const absl::string_view message = choice.status().message();
    FUZZ_CHECK(absl::StartsWith(message, "compression: ") ||
               absl::StartsWith(message, "compression.level: ") ||
               absl::StartsWith(message, "compression.codec: "));
    return;
  }
  FUZZ_CHECK(ValidateCompressionChoice(*choice, "compression").ok());
  absl::StatusOr<pb::CompressionChoice> again =
      ParseCompressionChoice(CompressionChoiceName(*choice), "compression");
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->codec() == choice->codec() && again->level() == choice->level());
}

}  // namespace
}  // namespace stoker

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<absl::string_view> chunks =
      stoker::fuzz::SplitChunks(absl::string_view(reinterpret_cast<const char*>(data), size), 3);
  if (chunks.size() < 2 || chunks[0].size() < 4) return 0;
  const auto* control = reinterpret_cast<const uint8_t*>(chunks[0].data());
  const auto codec =
      (control[0] & 1) != 0 ? stoker::v1::COMPRESSION_ZSTD : stoker::v1::COMPRESSION_LZ4;
  const size_t announced =
      (control[1] | size_t{control[2]} << 8 | size_t{control[3]} << 16) % stoker::kMaxAnnounced;
  if ((control[0] & 2) == 0) {
    std::vector<uint8_t> frame(chunks[1].begin(), chunks[1].end());  // exactly sized (ASan)
    std::unique_ptr<uint8_t[]> out;
    stoker::Decode(codec, frame, announced, &out).IgnoreError();  // checked inside
  } else {
    const int level = stoker::kMinZstdLevel +
                      (control[0] >> 2) % (stoker::kMaxZstdLevel - stoker::kMinZstdLevel + 1);
    stoker::CheckRoundTripAndLie(codec, level == 0 ? 1 : level, chunks[1], announced);
  }
  if (chunks.size() > 2) stoker::CheckChoiceName(chunks[2]);
  return 0;
}
