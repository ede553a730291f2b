// pixel_loops_body.inc compiled for -mavx2 -mfma, with -ffp-contract=off (see pixel_loops.h and
// augment/CMakeLists.txt).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "augment/kernels/pixel_loops.h"
#include "augment/kernels/pixel_loops_builds.h"

namespace stoker {
namespace pixel_loops {
namespace {
#include "augment/kernels/pixel_loops_body.inc"
}  // namespace

const PixelLoops& Avx2PixelLoopsBuild() {
  static constexpr PixelLoops kLoops = MakePixelLoops("avx2");
  return kLoops;
}

}  // namespace pixel_loops
}  // namespace stoker
