#ifndef STOKER_AUGMENT_KERNELS_CONVERT_TABLE_VARIANTS_H_
#define STOKER_AUGMENT_KERNELS_CONVERT_TABLE_VARIANTS_H_

// The builds of ConvertThroughTable (convert.h) that it chooses from at run time, best first:
//
//   AVX-512 VBMI (convert_table_avx512.cc, -mavx512f -mavx512bw -mavx512vl -mavx512vbmi): each
//     channel's 256 floats are split into 4 byte planes of 256 bytes; 64 uint8 values at a time
//     index them with vpermi2b (128-entry byte lookups; bit 7 picks the half), and the 4 looked-up
//     byte vectors are interleaved back into 64 floats. Channel counts 1 to 4, both layouts (CHW:
//     the source bytes of a channel are gathered with byte permutes first; HWC: each element's
//     channel is a lane mask); 5 or more channels take the portable build.
//   portable (convert.cc): scalar lookups, in CHW one channel at a time.
//
// No AVX2 or plain AVX-512 F/BW build: their only vector lookup is vgatherdps, which measured
// slower than the scalar loop on AMD Zen 4 (docs/benchmarks.md, "Fused to_float/normalize tail").
//
// Every build copies table entries, bit for bit (NaN payloads included): their outputs are equal.
// Exposed so that tests and the benchmark can run each.

#include "augment/kernels/convert.h"
#include "image/image.h"

namespace stoker {
namespace table_internal {

// Streaming stores: the portable build's in CHW only, 4 floats from 16-byte boundaries; the
// AVX-512 build's on each plane (CHW) or run (HWC) from its first 64-byte boundary.
void ConvertThroughTablePortable(const ImageView& in, const float* table, OutputLayout layout,
                                 TableStores stores, float* out);

// REQUIRES: CpuHasAvx512Vbmi(); otherwise as ConvertThroughTable.
void ConvertThroughTableAvx512(const ImageView& in, const float* table, OutputLayout layout,
                               TableStores stores, float* out);

// True when the build has the AVX-512 variant and this CPU has AVX-512 F, BW, VL and VBMI.
bool CpuHasAvx512Vbmi();

}  // namespace table_internal
}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_CONVERT_TABLE_VARIANTS_H_
