#ifndef STOKER_AUGMENT_KERNELS_CONVERT_H_
#define STOKER_AUGMENT_KERNELS_CONVERT_H_

// The last step of a pipeline: writes an HWC image into a batch slot in the batch's layout (HWC
// or CHW) and element type (uint8 or float32).
//
//   uint8   → float32: plain value cast (0..255, no scaling).
//   float32 → uint8:   round to nearest, ties to even (like OpenCV's saturate_cast), then
//                      saturate to 0..255; NaN becomes 0.
//   same type:         a copy (HWC) or a transpose (CHW).
//
// Pure function: no allocation, thread-safe on distinct outputs.

#include <cstddef>
#include <cstdint>

#include "image/image.h"

namespace stoker {

enum class OutputLayout { kHwc, kChw };

// Writes in.shape.elements() elements of `out_type` to `out` in `layout`.
// REQUIRES: `out` is aligned to PixelTypeSize(out_type) and does not overlap `in`.
void ConvertImage(const ImageView& in, OutputLayout layout, PixelType out_type, void* out);

// Values a uint8 element maps to, per channel: table[c * kTableValues + v] for value v of
// channel c (the fused to_float/normalize tail of augment/pipeline.h).
inline constexpr size_t kTableValues = 256;

// Writes in.shape.elements() float32 values to `out` in `layout`, each element looked up in
// `table` by its value and channel. Equal bit for bit on every CPU: the AVX-512 VBMI build where
// the CPU has it, else a portable loop (augment/kernels/convert_table_variants.h). For a batch
// slot: written once into a batch far larger than the caches, with streaming (non-temporal)
// stores where aligned (docs/benchmarks/tail-table.md).
// REQUIRES: in.shape.type == kUint8; `table` holds in.shape.channels * kTableValues floats;
//   `out` is float-aligned and does not overlap `in` or `table`.
void ConvertThroughTable(const ImageView& in, const float* table, OutputLayout layout, float* out);

// The same with 16-bit entries (float16 or bfloat16 bit patterns): writes in.shape.elements()
// uint16 values, `out` needs no alignment.
// REQUIRES: as ConvertThroughTable, `table` holding in.shape.channels * kTableValues uint16.
void ConvertThroughTable16(const ImageView& in, const uint16_t* table, OutputLayout layout,
                           void* out);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_CONVERT_H_
