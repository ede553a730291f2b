#include "augment/kernels/pixel_loops.h"

#include "augment/kernels/pixel_loops_builds.h"

namespace stoker {
namespace pixel_loops {

const PixelLoops* Avx2PixelLoops() {
#if defined(__x86_64__) && defined(STOKER_HAVE_PIXEL_LOOPS_X86)
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported ? &Avx2PixelLoopsBuild() : nullptr;
#else
  return nullptr;
#endif
}

const PixelLoops* Avx512PixelLoops() {
#if defined(__x86_64__) && defined(STOKER_HAVE_PIXEL_LOOPS_X86)
  static const bool supported = __builtin_cpu_supports("avx512f") &&
                                __builtin_cpu_supports("avx512vl") &&
                                __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("fma");
  return supported ? &Avx512PixelLoopsBuild() : nullptr;
#else
  return nullptr;
#endif
}

const PixelLoops& ActivePixelLoops() {
  static const PixelLoops* const active = [] {
    if (const PixelLoops* loops = Avx512PixelLoops()) return loops;
    if (const PixelLoops* loops = Avx2PixelLoops()) return loops;
    return &PortablePixelLoops();
  }();
  return *active;
}

}  // namespace pixel_loops
}  // namespace stoker
