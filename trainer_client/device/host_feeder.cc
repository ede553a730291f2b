#include "trainer_client/device/host_feeder.h"

#include <vector>

namespace stoker {
namespace {

// Thread-safe: each slot's buffer is touched only by the holder of the slot.
class HostFeeder : public DeviceFeeder {
 public:
  explicit HostFeeder(const DeviceOptions& options)
      : DeviceFeeder(options, DeviceId{DeviceKind::kCpu, 0}), buffers_(options.resident_batches) {}

 protected:
  absl::StatusOr<float*> ConvertInto(int slot, const Batch& batch, const Geometry& geometry,
                                     const ChannelAffine& affine, void** ready_event) override {
    std::vector<float>& out = buffers_[slot];
    out.resize(geometry.output_bytes() / sizeof(float));
    ConvertHwcToChwOnHost(static_cast<const uint8_t*>(batch.data()), geometry.n, geometry.h,
                          geometry.w, geometry.c, affine, out.data());
    *ready_event = nullptr;
    return out.data();
  }

  void BeforeReuse(int slot, void* consumer_stream) override {}

 private:
  std::vector<std::vector<float>> buffers_;
};

}  // namespace

std::unique_ptr<DeviceFeeder> CreateHostFeeder(const DeviceOptions& options) {
  return std::make_unique<HostFeeder>(options);
}

}  // namespace stoker
