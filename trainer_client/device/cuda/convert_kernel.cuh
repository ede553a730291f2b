#ifndef STOKER_TRAINER_CLIENT_DEVICE_CUDA_CONVERT_KERNEL_CUH_
#define STOKER_TRAINER_CLIENT_DEVICE_CUDA_CONVERT_KERNEL_CUH_

// uint8 [n, h, w, c] → float32 [n, c, h, w], out = in · scale[c] + shift[c] (convert.h), on
// `stream`. Returns the launch error.

#include <cuda_runtime.h>

#include <cstdint>

#include "trainer_client/device/convert.h"

namespace stoker {

cudaError_t LaunchConvertHwcToChw(const uint8_t* in, int64_t n, int64_t h, int64_t w, int64_t c,
                                  const ChannelAffine& affine, float* out, cudaStream_t stream);

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_DEVICE_CUDA_CONVERT_KERNEL_CUH_
