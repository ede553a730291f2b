// The uint8 antialiased resize compiled with -mavx2 (see resize_antialias_variants.h and
// augment/CMakeLists.txt). Only called after CpuHasAvx2().

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "augment/kernels/resize_antialias_variants.h"

namespace stoker {
namespace resize_internal {
namespace {
#include "augment/kernels/resize_antialias_body.inc"
}  // namespace

void ResampleUint8Avx2(const Uint8Resample& job) { ResampleUint8Body(job); }

}  // namespace resize_internal
}  // namespace stoker
