// pixel_loops_body.inc compiled for the baseline target (SSE2 on x86-64), with -ffp-contract=off
// (see pixel_loops.h and augment/CMakeLists.txt).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "augment/kernels/pixel_loops.h"

namespace stoker {
namespace pixel_loops {
namespace {
#include "augment/kernels/pixel_loops_body.inc"
}  // namespace

const PixelLoops& PortablePixelLoops() {
  static constexpr PixelLoops kLoops = MakePixelLoops("portable");
  return kLoops;
}

}  // namespace pixel_loops
}  // namespace stoker
