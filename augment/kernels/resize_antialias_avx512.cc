// The uint8 antialiased resize compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni
// -mprefer-vector-width=512 (see resize_antialias_variants.h and augment/CMakeLists.txt). Only
// called after CpuHasAvx512Vnni().

// GCC 12's AVX-512 intrinsics (_mm512_undefined_epi32's self-initialization) trip
// -Wuninitialized and -Wmaybe-uninitialized when inlined (GCC bug 105593); nothing here is
// uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "augment/kernels/resize_antialias_variants.h"

namespace stoker {
namespace resize_internal {
namespace {
#include "augment/kernels/resize_antialias_body.inc"
}  // namespace

void ResampleUint8Avx512(const Uint8Resample& job) { ResampleUint8Body(job); }

}  // namespace resize_internal
}  // namespace stoker
