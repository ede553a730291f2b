// pixel_loops_body.inc compiled for -mavx512f -mavx512vl -mavx512bw, with -ffp-contract=off (see
// pixel_loops.h and augment/CMakeLists.txt).

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

const PixelLoops& Avx512PixelLoopsBuild() {
  static constexpr PixelLoops kLoops = MakePixelLoops("avx512");
  return kLoops;
}

}  // namespace pixel_loops
}  // namespace stoker
