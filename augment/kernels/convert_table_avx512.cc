// ConvertThroughTable and ConvertThroughTable16 compiled with -mavx512f -mavx512bw -mavx512vl
// -mavx512vbmi (see convert_table_variants.h and augment/CMakeLists.txt). Only called after
// CpuHasAvx512Vbmi().
//
// 64 values of one channel per lookup: they index each byte plane of the channel's table with two
// masked vpermi2b (entries 0..127, then 128..255 where bit 7 is set), and the byte vectors are
// interleaved back into entries with unpacks (float32: 4 planes, 8 unpacks; 16-bit: 2 planes, 2
// unpacks). With several channels, each channel's bytes are picked out of the source first (and
// in HWC the looked-up bytes picked back into element order). The unpacks work within 128-bit
// lanes, so the values are placed in the byte vector beforehand in the order that makes the
// entries come out in element order (Spread).

// GCC 12's AVX-512 intrinsics (_mm512_undefined_epi32's self-initialization) trip
// -Wuninitialized and -Wmaybe-uninitialized when inlined (GCC bug 105593); nothing here is
// uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "augment/kernels/convert_table_variants.h"

namespace stoker {
namespace table_internal {
namespace {

constexpr size_t kStep = 64;  // elements (bytes of one vector) per step
constexpr size_t kMaxChannels = 4;

// One channel's 256 entries of kBytes bytes as byte planes: byte[b][v] is byte b (little endian)
// of entry v.
template <int kBytes>
struct alignas(64) BytePlanes {
  uint8_t byte[kBytes][kTableValues];
};

void SplitTable(const float* table, BytePlanes<4>* planes) {
  for (int b = 0; b < 4; ++b) {
    for (size_t v = 0; v < kTableValues; v += 16) {
      const __m512i entries = _mm512_srli_epi32(_mm512_loadu_si512(table + v), 8 * b);
      _mm_store_si128(reinterpret_cast<__m128i*>(&planes->byte[b][v]),
                      _mm512_cvtepi32_epi8(entries));
    }
  }
}

void SplitTable(const uint16_t* table, BytePlanes<2>* planes) {
  for (int b = 0; b < 2; ++b) {
    for (size_t v = 0; v < kTableValues; v += 32) {
      const __m512i entries = _mm512_srli_epi16(_mm512_loadu_si512(table + v), 8 * b);
      _mm256_store_si256(reinterpret_cast<__m256i*>(&planes->byte[b][v]),
                         _mm512_cvtepi16_epi8(entries));
    }
  }
}

// Where the unpacks of StoreEntries put each byte lane, so which of the step's elements the lane
// must hold. 4-byte entries: lane 16 L + 4 j + s (128-bit lane L, dword j of it, byte s) becomes
// entry 16 j + 4 L + s; 2-byte entries: lane 16 L + 8 j + s (j < 2, s < 8) becomes entry
// 32 j + 8 L + s.
template <int kBytes>
constexpr uint8_t Spread(size_t lane) {
  const size_t run = 16 / kBytes;  // entries of one unpacked vector per 128-bit lane
  const size_t l = lane / 16, j = lane % 16 / run, s = lane % run;
  return static_cast<uint8_t>(run * 4 * j + run * l + s);
}

__m512i LoadPlane(const uint8_t* p) { return _mm512_load_si512(p); }

// Byte b of table[idx lane] into bytes[b].
template <int kBytes>
inline void LookUp(__m512i idx, const BytePlanes<kBytes>& table, __m512i (&bytes)[kBytes]) {
  const __mmask64 high = _mm512_movepi8_mask(idx);
  for (int b = 0; b < kBytes; ++b) {
    const uint8_t* plane = table.byte[b];
    // The second lookup reads the indices of the lanes the first one left alone.
    const __m512i low =
        _mm512_mask2_permutex2var_epi8(LoadPlane(plane), idx, ~high, LoadPlane(plane + 64));
    bytes[b] =
        _mm512_mask2_permutex2var_epi8(LoadPlane(plane + 128), low, high, LoadPlane(plane + 192));
  }
}

void Store(__m512i v, bool stream, uint8_t* dst) {
  if (stream) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst), v);
  } else {
    _mm512_storeu_si512(dst, v);
  }
}

// The 64 entries whose bytes are bytes[0..kBytes) (lanes in Spread order) to dst, in order.
template <int kBytes>
inline void StoreEntries(const __m512i (&bytes)[kBytes], bool stream, uint8_t* dst) {
  const __m512i u0 = _mm512_unpacklo_epi8(bytes[0], bytes[1]);
  const __m512i u1 = _mm512_unpackhi_epi8(bytes[0], bytes[1]);
  if constexpr (kBytes == 2) {
    Store(u0, stream, dst);
    Store(u1, stream, dst + 64);
  } else {
    const __m512i v0 = _mm512_unpacklo_epi8(bytes[2], bytes[3]);
    const __m512i v1 = _mm512_unpackhi_epi8(bytes[2], bytes[3]);
    Store(_mm512_unpacklo_epi16(u0, v0), stream, dst);
    Store(_mm512_unpackhi_epi16(u0, v0), stream, dst + 64);
    Store(_mm512_unpacklo_epi16(u1, v1), stream, dst + 128);
    Store(_mm512_unpackhi_epi16(u1, v1), stream, dst + 192);
  }
}

bool Aligned64(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

// Entries of `size` bytes before `p` reaches a 64-byte boundary, at most `n` (0 where it never
// does: `p` not a multiple of `size`).
size_t HeadTo64(const uint8_t* p, size_t size, size_t n) {
  const size_t bytes = (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64;
  const size_t head = bytes % size == 0 ? bytes / size : 0;
  return head < n ? head : n;
}

// Lane i of the result = byte positions[i] (< 256) of v[0..3] taken as one array: two masked
// vpermi2b (bytes 0..127, then 128..255).
inline __m512i Pick(const __m512i (&v)[4], __m512i positions, __mmask64 upper) {
  const __m512i low = _mm512_mask2_permutex2var_epi8(v[0], positions, ~upper, v[1]);
  return _mm512_mask2_permutex2var_epi8(v[2], low, upper, v[3]);
}

// Lane vectors for Pick: lanes[e] of each, and its upper mask.
struct Picks {
  __m512i positions[kMaxChannels];
  __mmask64 upper[kMaxChannels];
};

template <typename Position>
Picks MakePicks(size_t count, Position position) {
  Picks picks;
  for (size_t k = 0; k < count; ++k) {
    alignas(64) uint8_t lanes[kStep];
    for (size_t e = 0; e < kStep; ++e) lanes[e] = static_cast<uint8_t>(position(k, e));
    picks.positions[k] = _mm512_load_si512(lanes);
    picks.upper[k] = _mm512_movepi8_mask(picks.positions[k]);
  }
  return picks;
}

// The step's 64 * channels source bytes (channels <= 4) as v[0..3].
inline void LoadStep(const uint8_t* s, size_t channels, __m512i (&v)[4]) {
  for (size_t r = 0; r < 4; ++r) v[r] = _mm512_loadu_si512(s + kStep * (r < channels ? r : 0));
}

// CHW, 2 to 4 channels. Channel c of a step's 64 pixels sits at source byte channels * pixel + c
// (< 256): two masked vpermi2b over the step's source vectors (bytes 0..127, then 128..255) put
// it in the lanes Spread asks for.
template <typename T>
void Chw(const uint8_t* src, size_t channels, size_t pixels, const T* table,
         const BytePlanes<sizeof(T)>* planes, bool stream, uint8_t* out) {
  const Picks split = MakePicks(
      channels, [channels](size_t c, size_t e) { return channels * Spread<sizeof(T)>(e) + c; });
  const size_t head = HeadTo64(out, sizeof(T), pixels);
  ScalarChw(src, channels, pixels, 0, head, table, out);
  bool streamed[kMaxChannels];
  for (size_t c = 0; c < channels; ++c) {
    streamed[c] = stream && Aligned64(out + (c * pixels + head) * sizeof(T));
  }
  size_t p = head;
  for (; p + kStep <= pixels; p += kStep) {
    __m512i v[4];
    LoadStep(src + p * channels, channels, v);
    for (size_t c = 0; c < channels; ++c) {
      __m512i bytes[sizeof(T)];
      LookUp(Pick(v, split.positions[c], split.upper[c]), planes[c], bytes);
      StoreEntries(bytes, streamed[c], out + (c * pixels + p) * sizeof(T));
    }
  }
  ScalarChw(src, channels, pixels, p, pixels, table, out);
}

// Whole pixels (of `pixel_bytes` output bytes) before `p` reaches a 64-byte boundary, at most
// `n`; 0 where it never does.
size_t PixelsTo64(const uint8_t* p, size_t pixel_bytes, size_t n) {
  for (size_t head = 0; head < kStep && head <= n; ++head) {
    if (Aligned64(p + head * pixel_bytes)) return head;
  }
  return 0;
}

// HWC, 2 to 4 channels, 64 pixels (channels runs of 64 elements) per step: each channel's values
// are picked out of the source (pixel order), looked up in that channel's planes alone, and each
// run picks its bytes back out of the channels' byte vectors, in the lanes Spread asks for.
template <typename T>
void Hwc(const uint8_t* src, size_t channels, size_t pixels, const T* table,
         const BytePlanes<sizeof(T)>* planes, bool stream, uint8_t* out) {
  const Picks split = MakePicks(channels, [channels](size_t c, size_t i) {
    return channels * i + c;  // channel c of pixel i
  });
  const Picks merge = MakePicks(channels, [channels](size_t run, size_t e) {
    const size_t n = kStep * run + Spread<sizeof(T)>(e);  // element n of the step
    return n % channels * kStep + n / channels;
  });
  const size_t head = PixelsTo64(out, channels * sizeof(T), pixels);
  ScalarHwc(src, channels, 0, head * channels, table, out);
  const bool streamed = stream && Aligned64(out + head * channels * sizeof(T));
  size_t p = head;
  for (; p + kStep <= pixels; p += kStep) {
    __m512i v[4];
    LoadStep(src + p * channels, channels, v);
    __m512i bytes[kMaxChannels][sizeof(T)];  // [channel][plane], pixel order
    for (size_t c = 0; c < channels; ++c) {
      LookUp(Pick(v, split.positions[c], split.upper[c]), planes[c], bytes[c]);
    }
    for (size_t run = 0; run < channels; ++run) {
      __m512i entries[sizeof(T)];
      for (size_t b = 0; b < sizeof(T); ++b) {
        __m512i by_channel[4];
        for (size_t c = 0; c < 4; ++c) by_channel[c] = bytes[c < channels ? c : 0][b];
        entries[b] = Pick(by_channel, merge.positions[run], merge.upper[run]);
      }
      StoreEntries(entries, streamed, out + (p * channels + kStep * run) * sizeof(T));
    }
  }
  ScalarHwc(src, channels, p * channels, pixels * channels, table, out);
}

// One channel (either layout): element n is source byte n, placed in the lanes Spread asks for.
template <typename T>
void OneChannel(const uint8_t* src, size_t elements, const T* table,
                const BytePlanes<sizeof(T)>& planes, bool stream, uint8_t* out) {
  alignas(64) uint8_t spread[kStep];
  for (size_t e = 0; e < kStep; ++e) spread[e] = Spread<sizeof(T)>(e);
  const __m512i order = _mm512_load_si512(spread);
  const size_t head = HeadTo64(out, sizeof(T), elements);
  ScalarHwc(src, 1, 0, head, table, out);
  const bool streamed = stream && Aligned64(out + head * sizeof(T));
  size_t n = head;
  for (; n + kStep <= elements; n += kStep) {
    const __m512i idx = _mm512_permutexvar_epi8(order, _mm512_loadu_si512(src + n));
    __m512i bytes[sizeof(T)];
    LookUp(idx, planes, bytes);
    StoreEntries(bytes, streamed, out + n * sizeof(T));
  }
  ScalarHwc(src, 1, n, elements, table, out);
}

template <typename T>
void Convert(const ImageView& in, const T* table, OutputLayout layout, bool stream, uint8_t* out) {
  const size_t channels = in.shape.channels;
  BytePlanes<sizeof(T)> planes[kMaxChannels];
  for (size_t c = 0; c < channels; ++c) SplitTable(table + c * kTableValues, &planes[c]);
  const uint8_t* src = in.pixels<const uint8_t>();
  const size_t pixels = size_t{in.shape.height} * in.shape.width;
  if (channels == 1) {
    OneChannel(src, pixels, table, planes[0], stream, out);
  } else if (layout == OutputLayout::kChw) {
    Chw(src, channels, pixels, table, planes, stream, out);
  } else {
    Hwc(src, channels, pixels, table, planes, stream, out);
  }
  if (stream) _mm_sfence();  // The streaming stores are visible before the caller hands `out` on.
}

}  // namespace

void ConvertThroughTableAvx512(const ImageView& in, const float* table, OutputLayout layout,
                               TableStores stores, float* out) {
  if (in.shape.channels > kMaxChannels) {
    return ConvertThroughTablePortable(in, table, layout, stores, out);
  }
  Convert(in, table, layout, stores == TableStores::kStreaming, reinterpret_cast<uint8_t*>(out));
}

void ConvertThroughTable16Avx512(const ImageView& in, const uint16_t* table, OutputLayout layout,
                                 TableStores stores, void* out) {
  if (in.shape.channels > kMaxChannels) {
    return ConvertThroughTable16Portable(in, table, layout, stores, out);
  }
  Convert(in, table, layout, stores == TableStores::kStreaming, static_cast<uint8_t*>(out));
}

}  // namespace table_internal
}  // namespace stoker
