#include "trainer_client/device/tail_on_device.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace stoker {

absl::StatusOr<DeviceNormalization> FoldTailForDevice(const v1::PipelineSpec& tail, int channels) {
  const bool float32 =
      tail.output_dtype() == v1::DTYPE_UNSPECIFIED || tail.output_dtype() == v1::DTYPE_FLOAT32;
  if (!float32 || tail.output_layout() != v1::LAYOUT_CHW) {
    return absl::InvalidArgumentError(
        "tail.output: the device path produces float32 CHW; this tail stays on the CPU");
  }
  if (tail.ops_size() == 0 || !tail.ops(0).has_to_float()) {
    return absl::InvalidArgumentError("tail.ops[0]: must be to_float");
  }
  // Running y = (x / 255 − mean) / std; each normalize(m, s) maps it to (y − m) / s.
  std::vector<float> mean(channels, 0.0f);
  std::vector<float> std(channels, 1.0f);
  for (int i = 1; i < tail.ops_size(); ++i) {
    const std::string field = absl::StrCat("tail.ops[", i, "]");
    if (!tail.ops(i).has_normalize()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": only normalize may follow to_float"));
    }
    const v1::NormalizeOp& op = tail.ops(i).normalize();
    if (op.mean_size() != channels || op.std_size() != channels) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".normalize: ", op.mean_size(),
                                                     " means and ", op.std_size(), " stds for ",
                                                     channels, " channels"));
    }
    for (int c = 0; c < channels; ++c) {
      if (!(op.std(c) > 0.0f)) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".normalize.std[", c, "]: must be > 0"));
      }
      mean[c] += op.mean(c) * std[c];
      std[c] *= op.std(c);
    }
  }
  if (tail.ops_size() == 1) return DeviceNormalization{};
  return DeviceNormalization{std::move(mean), std::move(std)};
}

}  // namespace stoker
