#ifndef STOKER_AUGMENT_KERNELS_CONVERT_TABLE_VARIANTS_H_
#define STOKER_AUGMENT_KERNELS_CONVERT_TABLE_VARIANTS_H_

// The builds of ConvertThroughTable (convert.h) that it chooses from at run time, best first:
//
//   AVX-512 VBMI (convert_table_avx512.cc, -mavx512f -mavx512bw -mavx512vl -mavx512vbmi): each
//     channel's 256 floats are split into 4 byte planes of 256 bytes; 64 uint8 values at a time
//     index them with vpermi2b (128-entry byte lookups; bit 7 picks the half), and the 4 looked-up
//     byte vectors are interleaved back into 64 floats. Channel counts 1 to 4, both layouts (the
//     source bytes of each channel are picked out with byte permutes first; in HWC the looked-up
//     bytes are picked back into element order); 5 or more channels take the portable build.
//   portable (convert_table.cc): scalar lookups, in CHW one channel at a time.
//
// No AVX2 or plain AVX-512 F/BW build: their only vector lookup is vgatherdps, which measured
// slower than the scalar loop on AMD Zen 4 (docs/benchmarks/tail-table.md).
//
// Each comes for float32 entries (ConvertThroughTable) and 16-bit ones (ConvertThroughTable16).
// Every build copies table entries, bit for bit (NaN payloads included): their outputs are equal.
// Exposed so that tests and the benchmark can run each.

#include <cstddef>
#include <cstdint>

#include "augment/kernels/convert.h"
#include "image/image.h"

namespace stoker {
namespace table_internal {

// How a build writes `out`: kStreaming bypasses the caches (non-temporal stores where aligned:
// what ConvertThroughTable and ConvertThroughTable16 use), kCached writes through them (for the
// benchmark and the tests).
enum class TableStores { kStreaming, kCached };

// Streaming stores: the portable build's in CHW only, 4 floats from 16-byte boundaries; the
// AVX-512 build's on each plane (CHW) or run (HWC) from its first 64-byte boundary.
void ConvertThroughTablePortable(const ImageView& in, const float* table, OutputLayout layout,
                                 TableStores stores, float* out);
// 16-bit entries (ConvertThroughTable16); the portable build writes with ordinary stores only.
void ConvertThroughTable16Portable(const ImageView& in, const uint16_t* table, OutputLayout layout,
                                   TableStores stores, void* out);

// REQUIRES: CpuHasAvx512Vbmi(); otherwise as ConvertThroughTable.
void ConvertThroughTableAvx512(const ImageView& in, const float* table, OutputLayout layout,
                               TableStores stores, float* out);
// REQUIRES: CpuHasAvx512Vbmi(); otherwise as ConvertThroughTable16.
void ConvertThroughTable16Avx512(const ImageView& in, const uint16_t* table, OutputLayout layout,
                                 TableStores stores, void* out);

// Scalar loops over part of an image (T: float or uint16_t; `out` needs no alignment), for the
// vector build's heads and tails: CHW pixels [first, last) of every plane, and HWC elements
// [first, last).
template <typename T>
void ScalarChw(const uint8_t* src, size_t channels, size_t pixels, size_t first, size_t last,
               const T* table, void* out);
template <typename T>
void ScalarHwc(const uint8_t* src, size_t channels, size_t first, size_t last, const T* table,
               void* out);

// True when the build has the AVX-512 variant and this CPU has AVX-512 F, BW, VL and VBMI.
bool CpuHasAvx512Vbmi();

}  // namespace table_internal
}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_CONVERT_TABLE_VARIANTS_H_
