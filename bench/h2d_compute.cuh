#ifndef STOKER_BENCH_H2D_COMPUTE_CUH_
#define STOKER_BENCH_H2D_COMPUTE_CUH_

// A stand-in for a training step's compute in the h2d benchmark: a kernel over every SM that
// reads the converted batch once and then spends a fixed number of dependent FMAs per thread,
// so its duration is set by `iterations` and does not depend on what the copy engine does.

#include <cuda_runtime.h>

#include <cstddef>

namespace stoker {
namespace bench {

// Reads `count` floats of `input` (may be null: pure arithmetic) and writes one float per thread
// into `sink` (`sink_count` floats, >= blocks × 256). Launched on `stream`.
cudaError_t LaunchFakeStep(const float* input, size_t count, int iterations, float* sink,
                           int blocks, cudaStream_t stream);

}  // namespace bench
}  // namespace stoker

#endif  // STOKER_BENCH_H2D_COMPUTE_CUH_
