#include "trainer_client/device/cuda/convert_kernel.cuh"

namespace stoker {
namespace {

// One thread per output element, consecutive threads along x: writes are coalesced, reads are
// strided by c (at most 4 bytes apart), which the cache absorbs.
__global__ void ConvertHwcToChwKernel(const uint8_t* __restrict__ in, int64_t total, int64_t h,
                                      int64_t w, int64_t c, ChannelAffine affine,
                                      float* __restrict__ out) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const int64_t x = i % w;
    const int64_t y = (i / w) % h;
    const int64_t ch = (i / (w * h)) % c;
    const int64_t image = i / (w * h * c);
    const uint8_t value = in[((image * h + y) * w + x) * c + ch];
    out[i] = value * affine.scale[ch] + affine.shift[ch];
  }
}

}  // namespace

cudaError_t LaunchConvertHwcToChw(const uint8_t* in, int64_t n, int64_t h, int64_t w, int64_t c,
                                  const ChannelAffine& affine, float* out, cudaStream_t stream) {
  const int64_t total = n * h * w * c;
  constexpr int kThreads = 256;
  const int64_t blocks = (total + kThreads - 1) / kThreads;
  const int grid = static_cast<int>(blocks < 65535 * 8 ? blocks : 65535 * 8);
  ConvertHwcToChwKernel<<<grid, kThreads, 0, stream>>>(in, total, h, w, c, affine, out);
  return cudaGetLastError();
}

}  // namespace stoker
