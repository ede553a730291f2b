// A stand-in for libnvidia-ml.so.1, built as a shared library that gpu_utilization_test loads
// with dlopen: this machine (and CI) has no NVIDIA driver, so the sampler's real load-and-resolve
// path is tested against this library instead. It exports the four NVML functions the sampler
// resolves, with NVML's C signatures: one GPU at bus id kBusyGpu at 73% utilization, and one at
// kFailingGpu whose utilization query fails (NVML_ERROR_NOT_SUPPORTED).

#include <cstring>

namespace {
constexpr char kBusyGpu[] = "00000000:01:00.0";
constexpr char kFailingGpu[] = "00000000:02:00.0";
constexpr int kSuccess = 0;
constexpr int kErrorNotSupported = 3;
constexpr int kErrorNotFound = 6;
int busy_device = 1;
int failing_device = 2;
}  // namespace

struct FakeUtilization {
  unsigned int gpu;
  unsigned int memory;
};

extern "C" {
__attribute__((visibility("default"))) int nvmlInit_v2() { return kSuccess; }

__attribute__((visibility("default"))) int nvmlShutdown() { return kSuccess; }

__attribute__((visibility("default"))) int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id,
                                                                            void** device) {
  if (std::strcmp(bus_id, kBusyGpu) == 0) {
    *device = &busy_device;
  } else if (std::strcmp(bus_id, kFailingGpu) == 0) {
    *device = &failing_device;
  } else {
    return kErrorNotFound;
  }
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(
    void* device, FakeUtilization* utilization) {
  if (device != &busy_device) return kErrorNotSupported;
  utilization->gpu = 73;
  utilization->memory = 20;
  return kSuccess;
}
}
