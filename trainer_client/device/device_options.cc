#include "trainer_client/device/device_options.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace stoker {

absl::StatusOr<DeviceId> ParseDevice(const std::string& device) {
  if (device == "cpu") return DeviceId{DeviceKind::kCpu, 0};
  if (device == "cuda") return DeviceId{DeviceKind::kCuda, 0};
  absl::string_view rest(device);
  int index = 0;
  if (absl::ConsumePrefix(&rest, "cuda:") && absl::SimpleAtoi(rest, &index) && index >= 0) {
    return DeviceId{DeviceKind::kCuda, index};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("device: expected cpu, cuda or cuda:N, got \"", device, "\""));
}

absl::Status DeviceOptions::Validate() const {
  if (absl::StatusOr<DeviceId> id = ParseDevice(device); !id.ok()) return id.status();
  if (resident_batches == 0) return absl::InvalidArgumentError("resident_batches: must be > 0");
  if (mean.size() != std.size()) {
    return absl::InvalidArgumentError(absl::StrCat("mean, std: one value per channel each, got ",
                                                   mean.size(), " and ", std.size()));
  }
  for (size_t c = 0; c < std.size(); ++c) {
    if (!(std[c] > 0)) {
      return absl::InvalidArgumentError(absl::StrCat("std[", c, "]: must be > 0, got ", std[c]));
    }
  }
  return absl::OkStatus();
}

}  // namespace stoker
