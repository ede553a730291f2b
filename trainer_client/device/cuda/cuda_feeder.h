#ifndef STOKER_TRAINER_CLIENT_DEVICE_CUDA_CUDA_FEEDER_H_
#define STOKER_TRAINER_CLIENT_DEVICE_CUDA_CUDA_FEEDER_H_

// The DeviceFeeder for "cuda:N" (built only with CUDA; see device_feeder.h for the protocol).
// Uses the CUDA runtime only, never the driver API, so binaries start on hosts without a GPU.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "trainer_client/device/device_feeder.h"

namespace stoker {

// FAILED_PRECONDITION with CUDA's reason when device.index cannot be used (no driver, no
// device, index out of range); INTERNAL naming the call when an allocation fails.
absl::StatusOr<std::unique_ptr<DeviceFeeder>> CreateCudaFeeder(const DeviceOptions& options,
                                                               DeviceId device);

// Number of usable CUDA devices: 0 when the runtime reports an error (no driver, no device), as
// on build machines without a GPU.
int CudaDeviceCount();

// The PCI bus id of CUDA device `index` ("0000:3b:00.0"); empty when the runtime cannot say.
std::string CudaPciBusId(int index);

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_DEVICE_CUDA_CUDA_FEEDER_H_
