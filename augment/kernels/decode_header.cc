// The gates of decode.h that need no decoder: magic bytes, PNG and WebP headers, JPEG scans.

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/strings/str_cat.h"
#include "augment/kernels/decode.h"
#include "common/bad_sample.h"

namespace stoker {
namespace {

constexpr uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

uint32_t BigEndian32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
uint32_t LittleEndian16(const uint8_t* p) { return uint32_t{p[0]} | uint32_t{p[1]} << 8; }
uint32_t LittleEndian24(const uint8_t* p) { return LittleEndian16(p) | uint32_t{p[2]} << 16; }

bool StartsWith(absl::Span<const uint8_t> bytes, size_t offset, const char* text) {
  const size_t n = std::strlen(text);
  return bytes.size() >= offset + n && std::memcmp(bytes.data() + offset, text, n) == 0;
}

absl::Status Truncated(const char* what) {
  return BadSampleError(BadSampleReason::kDecodeError, absl::StrCat(what, " header is truncated"));
}

// PNG: width and height are the first fields of the IHDR chunk, which must come first.
absl::StatusOr<EncodedHeader> PngHeader(absl::Span<const uint8_t> bytes) {
  if (bytes.size() < 24 || !StartsWith(bytes, 12, "IHDR")) return Truncated("PNG");
  return EncodedHeader{EncodedFormat::kPng, BigEndian32(bytes.data() + 20),
                       BigEndian32(bytes.data() + 16)};
}

// WebP: RIFF container; the first chunk is VP8 (lossy), VP8L (lossless) or VP8X (extended).
absl::StatusOr<EncodedHeader> WebpHeader(absl::Span<const uint8_t> bytes) {
  const uint8_t* p = bytes.data();
  if (StartsWith(bytes, 12, "VP8 ") && bytes.size() >= 30) {
    return EncodedHeader{EncodedFormat::kWebp, LittleEndian16(p + 28) & 0x3FFF,
                         LittleEndian16(p + 26) & 0x3FFF};
  }
  if (StartsWith(bytes, 12, "VP8L") && bytes.size() >= 25) {
    const uint32_t bits = LittleEndian24(p + 21) | uint32_t{p[24]} << 24;
    return EncodedHeader{EncodedFormat::kWebp, ((bits >> 14) & 0x3FFF) + 1, (bits & 0x3FFF) + 1};
  }
  if (StartsWith(bytes, 12, "VP8X") && bytes.size() >= 30) {
    return EncodedHeader{EncodedFormat::kWebp, LittleEndian24(p + 27) + 1,
                         LittleEndian24(p + 24) + 1};
  }
  return Truncated("WebP");
}

}  // namespace

absl::StatusOr<EncodedFormat> SniffFormat(absl::Span<const uint8_t> bytes) {
  if (bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF) {
    return EncodedFormat::kJpeg;
  }
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kPngSignature, 8) == 0) {
    return EncodedFormat::kPng;
  }
  if (StartsWith(bytes, 0, "RIFF") && StartsWith(bytes, 8, "WEBP")) return EncodedFormat::kWebp;
  return BadSampleError(BadSampleReason::kUnsupportedFormat,
                        "not a JPEG, PNG or WebP file (magic bytes)");
}

absl::StatusOr<EncodedHeader> ReadNonJpegHeader(absl::Span<const uint8_t> bytes,
                                                EncodedFormat format) {
  return format == EncodedFormat::kPng ? PngHeader(bytes) : WebpHeader(bytes);
}

absl::Status CheckPixelBudget(const EncodedHeader& header, uint64_t max_pixels) {
  if (header.height == 0 || header.width == 0) {
    return BadSampleError(BadSampleReason::kDecodeError, "header announces an empty image");
  }
  const uint64_t pixels = uint64_t{header.height} * header.width;
  if (pixels > max_pixels) {
    return BadSampleError(BadSampleReason::kTooLarge,
                          absl::StrCat("image is ", header.width, "x", header.height, " = ", pixels,
                                       " pixels, over the budget of ", max_pixels));
  }
  return absl::OkStatus();
}

const uint8_t* NextJpegMarker(const uint8_t* p, const uint8_t* end) {
#if defined(__SSE2__)
  const __m128i ff = _mm_set1_epi8(static_cast<char>(0xFF));
  for (; end - p >= 17; p += 16) {  // Reads p[0..16].
    const __m128i here = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i next = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 1));
    const __m128i stuffed = _mm_cmpeq_epi8(next, _mm_setzero_si128());
    const int mask = _mm_movemask_epi8(_mm_andnot_si128(stuffed, _mm_cmpeq_epi8(here, ff)));
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
  }
#endif
  for (; end - p >= 2; ++p) {
    if (p[0] == 0xFF && p[1] != 0x00) return p;
  }
  return nullptr;
}

int CountJpegScans(absl::Span<const uint8_t> bytes, int cap) {
  const size_t n = bytes.size();
  size_t pos = 2;  // After SOI.
  int scans = 0;
  while (pos + 1 < n && scans <= cap) {
    if (bytes[pos] != 0xFF) return scans;         // Segments must start with a marker.
    while (pos < n && bytes[pos] == 0xFF) ++pos;  // Fill bytes.
    if (pos >= n) return scans;
    const uint8_t marker = bytes[pos++];
    if (marker == 0xD9) return scans;                                    // EOI.
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // No length.
    if (pos + 2 > n) return scans;
    const size_t length = size_t{bytes[pos]} << 8 | bytes[pos + 1];
    if (length < 2) return scans;
    pos += length;
    if (marker != 0xDA) continue;
    ++scans;
    // Entropy-coded data runs to the next marker other than RSTn (this walk is over the whole
    // file, for every sample a worker decodes).
    while (pos + 1 < n) {
      const uint8_t* marker_at = NextJpegMarker(bytes.data() + pos, bytes.data() + n);
      if (marker_at == nullptr) {
        pos = n - 1;
        break;
      }
      pos = static_cast<size_t>(marker_at - bytes.data());
      const uint8_t next = bytes[pos + 1];
      if (!(next >= 0xD0 && next <= 0xD7)) break;
      pos += 2;
    }
  }
  return scans;
}

}  // namespace stoker
