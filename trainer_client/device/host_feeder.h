#ifndef STOKER_TRAINER_CLIENT_DEVICE_HOST_FEEDER_H_
#define STOKER_TRAINER_CLIENT_DEVICE_HOST_FEEDER_H_

// The DeviceFeeder for device "cpu": the conversion runs on the calling thread into host memory
// (one buffer per slot, grown on demand and kept).

#include <memory>

#include "trainer_client/device/device_feeder.h"

namespace stoker {

// REQUIRES: options.Validate().ok() and options.device is "cpu".
std::unique_ptr<DeviceFeeder> CreateHostFeeder(const DeviceOptions& options);

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_DEVICE_HOST_FEEDER_H_
