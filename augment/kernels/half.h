#ifndef STOKER_AUGMENT_KERNELS_HALF_H_
#define STOKER_AUGMENT_KERNELS_HALF_H_

// float32 → 16-bit floats, the compact batch formats (output_dtype FLOAT16 / BFLOAT16):
//
//   float16  (IEEE-754 binary16): round to nearest, ties to even; overflow (|x| ≥ 65520) gives
//            ±inf; results below 2^-14 are subnormal halves (rounded the same way), below 2^-25
//            ±0; NaN stays NaN, quieted (bit 9 set), keeping the sign and the top 9 bits of its
//            payload — what x86's F16C (vcvtps2ph) does, so the vector and scalar paths agree.
//   bfloat16 (the top 16 bits of a float32): round to nearest, ties to even, on the bit pattern
//            (so finite values near FLT_MAX may round to ±inf, and float32 subnormals round
//            like any other value, no flush to zero); NaN stays NaN, quieted (bit 6 set), sign and
//            top payload bits kept (never rounded into an infinity).
//
// Run-time dispatch: AVX-512F where the CPU has it, else AVX2 (+F16C for float16), else a
// portable scalar loop; every variant gives the same bits (tested). Output is written with
// unaligned stores: `dst` needs no alignment. Pure functions: no allocation, thread-safe on
// distinct outputs. `src` and `dst` must not overlap.

#include <cstddef>
#include <cstdint>

namespace stoker {

// dst[i] = the float16 bits of src[i], for i < n.
void FloatToFloat16(const float* src, size_t n, void* dst);
// dst[i] = the bfloat16 bits of src[i], for i < n.
void FloatToBfloat16(const float* src, size_t n, void* dst);

// One value, scalar (the portable variant's definition).
uint16_t Float16Bits(float value);
uint16_t Bfloat16Bits(float value);

namespace half_internal {

// The variants FloatToFloat16 / FloatToBfloat16 choose from, exposed for tests.
enum class HalfIsa { kPortable, kAvx2, kAvx512 };
// The best variant this CPU (and build) runs.
HalfIsa BestHalfIsa();
// REQUIRES: `isa` is kPortable or no better than BestHalfIsa().
void FloatToFloat16With(HalfIsa isa, const float* src, size_t n, void* dst);
void FloatToBfloat16With(HalfIsa isa, const float* src, size_t n, void* dst);

}  // namespace half_internal
}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_HALF_H_
