#include "trainer_client/device/device_feeder.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "trainer_client/device/host_feeder.h"
#if STOKER_HAVE_CUDA
#include "trainer_client/device/cuda/cuda_feeder.h"
#endif

namespace stoker {

DeviceTensor::DeviceTensor(DeviceTensor&& other) noexcept { *this = std::move(other); }

DeviceTensor& DeviceTensor::operator=(DeviceTensor&& other) noexcept {
  if (this == &other) return *this;
  Release();
  feeder_ = std::exchange(other.feeder_, nullptr);
  slot_ = std::exchange(other.slot_, -1);
  data_ = std::exchange(other.data_, nullptr);
  shape_ = std::move(other.shape_);
  device_ = other.device_;
  ready_event_ = std::exchange(other.ready_event_, nullptr);
  batch_ = std::move(other.batch_);
  return *this;
}

void DeviceTensor::Release(void* consumer_stream) {
  if (feeder_ == nullptr) return;
  feeder_->ReleaseSlot(slot_, consumer_stream);
  feeder_ = nullptr;
  data_ = nullptr;
  ready_event_ = nullptr;
}

absl::StatusOr<std::unique_ptr<DeviceFeeder>> DeviceFeeder::Create(const DeviceOptions& options) {
  RETURN_IF_ERROR(options.Validate());
  ASSIGN_OR_RETURN(const DeviceId device, ParseDevice(options.device));
  if (device.kind == DeviceKind::kCpu) return CreateHostFeeder(options);
#if STOKER_HAVE_CUDA
  return CreateCudaFeeder(options, device);
#else
  return absl::FailedPreconditionError(
      absl::StrCat("device ", options.device,
                   ": this build of Stoker has no CUDA support (STOKER_CUDA=OFF or "
                   "no CUDA toolkit at build time); use device \"cpu\""));
#endif
}

std::string CudaPciBusIdOf(const std::string& device) {
  const absl::StatusOr<DeviceId> id = ParseDevice(device);
  if (!id.ok() || id->kind != DeviceKind::kCuda) return "";
#if STOKER_HAVE_CUDA
  return CudaPciBusId(id->index);
#else
  return "";
#endif
}

DeviceFeeder::DeviceFeeder(DeviceOptions options, DeviceId device)
    : options_(std::move(options)), device_(device) {
  for (int slot = static_cast<int>(options_.resident_batches) - 1; slot >= 0; --slot) {
    free_slots_.push_back(slot);
  }
}

absl::StatusOr<DeviceTensor> DeviceFeeder::Convert(const Batch& batch) {
  if (batch.dtype() != v1::DTYPE_UINT8 || batch.layout() != v1::LAYOUT_HWC ||
      batch.shape().size() != 4) {
    return absl::InvalidArgumentError(
        "batch: the device path takes uint8 HWC batches (set the pipeline's output_dtype to "
        "uint8 and its output_layout to HWC)");
  }
  const Geometry geometry{batch.shape()[0], batch.shape()[1], batch.shape()[2], batch.shape()[3]};
  if (geometry.c > ChannelAffine::kMaxChannels ||
      (!options_.mean.empty() && static_cast<int64_t>(options_.mean.size()) != geometry.c)) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch: ", geometry.c, " channels, but the feeder normalizes ",
                     options_.mean.size(), " (at most ", ChannelAffine::kMaxChannels, ")"));
  }
  if (batch.size_bytes() != geometry.input_bytes()) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch: ", batch.size_bytes(), " payload bytes, but its shape [",
                     absl::StrJoin(batch.shape(), ", "), "] needs ", geometry.input_bytes()));
  }
  int slot;
  {
    absl::MutexLock lock(&mu_);
    auto ready = [this]()
                     ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopped_ || !free_slots_.empty(); };
    mu_.Await(absl::Condition(&ready));
    if (stopped_) return absl::CancelledError("device feeder stopped");
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  const ChannelAffine affine =
      MakeChannelAffine(options_.mean, options_.std, static_cast<int>(geometry.c));
  DeviceTensor tensor;
  absl::StatusOr<float*> data = ConvertInto(slot, batch, geometry, affine, &tensor.ready_event_);
  if (!data.ok()) {
    ReleaseSlot(slot, nullptr);
    return data.status();
  }
  tensor.feeder_ = this;
  tensor.slot_ = slot;
  tensor.data_ = *data;
  tensor.shape_ = {geometry.n, geometry.c, geometry.h, geometry.w};
  tensor.device_ = device_;
  tensor.batch_ = batch;
  return tensor;
}

void DeviceFeeder::ReleaseSlot(int slot, void* consumer_stream) {
  BeforeReuse(slot, consumer_stream);
  absl::MutexLock lock(&mu_);
  free_slots_.push_back(slot);
}

void DeviceFeeder::Stop() {
  absl::MutexLock lock(&mu_);
  stopped_ = true;
}

}  // namespace stoker
