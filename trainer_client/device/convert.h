#ifndef STOKER_TRAINER_CLIENT_DEVICE_CONVERT_H_
#define STOKER_TRAINER_CLIENT_DEVICE_CONVERT_H_

// The conversion a DeviceFeeder applies to a uint8 HWC batch, on the host (this function) or on
// a CUDA device (cuda/convert_kernel.cu, the same arithmetic):
//   out[n][c][y][x] = in[n][y][x][c] * scale[c] + shift[c]
// with scale = 1 / (255 · std) and shift = −mean / std, i.e. (x / 255 − mean) / std.

#include <cstdint>
#include <vector>

namespace stoker {

// Per-channel affine coefficients; at most kMaxChannels channels.
struct ChannelAffine {
  static constexpr int kMaxChannels = 4;
  float scale[kMaxChannels];
  float shift[kMaxChannels];
};

// From DeviceOptions' mean/std (both empty: plain x / 255) for `channels` channels.
// REQUIRES: channels <= kMaxChannels; mean/std empty or of size `channels`.
ChannelAffine MakeChannelAffine(const std::vector<float>& mean, const std::vector<float>& std,
                                int channels);

// uint8 [n, h, w, c] → float32 [n, c, h, w]. REQUIRES: c <= ChannelAffine::kMaxChannels.
void ConvertHwcToChwOnHost(const uint8_t* in, int64_t n, int64_t h, int64_t w, int64_t c,
                           const ChannelAffine& affine, float* out);

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_DEVICE_CONVERT_H_
