#include "bench/h2d_compute.cuh"

namespace stoker {
namespace bench {
namespace {

constexpr int kThreads = 256;

__global__ void FakeStep(const float* input, size_t count, int iterations, float* sink) {
  const size_t thread = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  float acc = 0.f;
  for (size_t i = thread; input != nullptr && i < count; i += stride) acc += input[i];
  float x = acc * 1e-7f + 1.f;
  for (int i = 0; i < iterations; ++i) x = fmaf(x, 0.999999f, 1e-7f);
  sink[thread] = x;
}

}  // namespace

cudaError_t LaunchFakeStep(const float* input, size_t count, int iterations, float* sink,
                           int blocks, cudaStream_t stream) {
  FakeStep<<<blocks, kThreads, 0, stream>>>(input, count, iterations, sink);
  return cudaGetLastError();
}

}  // namespace bench
}  // namespace stoker
