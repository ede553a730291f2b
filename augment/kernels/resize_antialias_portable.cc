// The uint8 antialiased resize for the baseline target (see resize_antialias_variants.h).

#include <algorithm>
#include <cstring>

#include "augment/kernels/resize_antialias_variants.h"

namespace stoker {
namespace resize_internal {
namespace {
#include "augment/kernels/resize_antialias_body.inc"
}  // namespace

void ResampleUint8Portable(const Uint8Resample& job) { ResampleUint8Body(job); }

}  // namespace resize_internal
}  // namespace stoker
