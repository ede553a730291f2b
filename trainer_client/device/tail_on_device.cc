#include "trainer_client/device/tail_on_device.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace stoker {
namespace {

// The workers' batch as received: the device runs the tail.
class PassThroughTail : public BatchTail {
 public:
  explicit PassThroughTail(absl::Span<const int64_t> shape) : shape_(shape.begin(), shape.end()) {
    for (int64_t dim : shape_) bytes_ *= static_cast<uint64_t>(dim);
  }
  absl::StatusOr<Batch> Apply(const Batch& batch) override { return batch; }
  absl::Span<const int64_t> batch_shape() const override { return shape_; }
  uint64_t batch_bytes() const override { return bytes_; }

 private:
  const std::vector<int64_t> shape_;
  uint64_t bytes_ = 1;
};

}  // namespace

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

BatchTailFactory DeviceTailFactory(std::shared_ptr<std::optional<DeviceNormalization>> folded) {
  return [folded = std::move(folded)](const v1::PipelineSpec& tail,
                                      absl::Span<const int64_t> worker_batch_shape)
             -> absl::StatusOr<std::unique_ptr<BatchTail>> {
    if (worker_batch_shape.size() != 4) {
      return absl::InvalidArgumentError("tail: the workers' batch shape is not [N, H, W, C]");
    }
    absl::StatusOr<DeviceNormalization> normalization =
        FoldTailForDevice(tail, static_cast<int>(worker_batch_shape[3]));
    if (!normalization.ok()) return normalization.status();
    *folded = *std::move(normalization);
    return std::make_unique<PassThroughTail>(worker_batch_shape);
  };
}

}  // namespace stoker
