#ifndef STOKER_AUGMENT_KERNELS_PIXEL_LOOPS_BUILDS_H_
#define STOKER_AUGMENT_KERNELS_PIXEL_LOOPS_BUILDS_H_

// The x86-64 builds of pixel_loops_body.inc, defined only where augment/CMakeLists.txt compiles
// them (STOKER_HAVE_PIXEL_LOOPS_X86). Private to pixel_loops*.cc: callers use pixel_loops.h,
// which checks the CPU before handing one out.

#include "augment/kernels/pixel_loops.h"

namespace stoker {
namespace pixel_loops {

const PixelLoops& Avx2PixelLoopsBuild();    // REQUIRES: the CPU has AVX2 and FMA.
const PixelLoops& Avx512PixelLoopsBuild();  // REQUIRES: the CPU has AVX-512 F, VL and BW.

}  // namespace pixel_loops
}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_PIXEL_LOOPS_BUILDS_H_
