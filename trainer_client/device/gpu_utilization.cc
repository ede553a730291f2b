#include "trainer_client/device/gpu_utilization.h"

#include <dlfcn.h>

#include <algorithm>

namespace stoker {
// Named, not anonymous: the types are members of NvmlGpuUtilizationSampler::Nvml, which the
// header declares (GCC's -Wsubobject-linkage where the file is compiled in a unity batch).
namespace nvml_abi {

// The few NVML declarations used, from its documented C ABI (nvml.h is not needed to build).
using NvmlReturn = int;  // nvmlReturn_t
constexpr NvmlReturn kNvmlSuccess = 0;
using NvmlDevice = struct NvmlDeviceOpaque*;  // nvmlDevice_t
struct NvmlUtilization {                      // nvmlUtilization_t
  unsigned int gpu;                           // percent of time a kernel ran
  unsigned int memory;                        // percent of time device memory was read or written
};
using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using HandleByPciBusIdFn = NvmlReturn (*)(const char*, NvmlDevice*);
using UtilizationRatesFn = NvmlReturn (*)(NvmlDevice, NvmlUtilization*);

}  // namespace nvml_abi

struct NvmlGpuUtilizationSampler::Nvml {
  void* library = nullptr;
  bool initialized = false;
  nvml_abi::ShutdownFn shutdown = nullptr;
  nvml_abi::UtilizationRatesFn utilization_rates = nullptr;
  nvml_abi::NvmlDevice device = nullptr;

  ~Nvml() {
    if (initialized) shutdown();
    if (library != nullptr) dlclose(library);
  }
};

std::unique_ptr<NvmlGpuUtilizationSampler> NvmlGpuUtilizationSampler::Open(
    const std::string& pci_bus_id, const std::string& library) {
  auto nvml = std::make_unique<Nvml>();
  nvml->library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (nvml->library == nullptr) return nullptr;
  const auto init = reinterpret_cast<nvml_abi::InitFn>(dlsym(nvml->library, "nvmlInit_v2"));
  nvml->shutdown = reinterpret_cast<nvml_abi::ShutdownFn>(dlsym(nvml->library, "nvmlShutdown"));
  const auto handle_by_pci_bus_id = reinterpret_cast<nvml_abi::HandleByPciBusIdFn>(
      dlsym(nvml->library, "nvmlDeviceGetHandleByPciBusId_v2"));
  nvml->utilization_rates = reinterpret_cast<nvml_abi::UtilizationRatesFn>(
      dlsym(nvml->library, "nvmlDeviceGetUtilizationRates"));
  if (init == nullptr || nvml->shutdown == nullptr || handle_by_pci_bus_id == nullptr ||
      nvml->utilization_rates == nullptr) {
    return nullptr;
  }
  if (init() != nvml_abi::kNvmlSuccess) return nullptr;
  nvml->initialized = true;
  if (handle_by_pci_bus_id(pci_bus_id.c_str(), &nvml->device) != nvml_abi::kNvmlSuccess) {
    return nullptr;
  }
  return std::unique_ptr<NvmlGpuUtilizationSampler>(new NvmlGpuUtilizationSampler(std::move(nvml)));
}

NvmlGpuUtilizationSampler::NvmlGpuUtilizationSampler(std::unique_ptr<Nvml> nvml)
    : nvml_(std::move(nvml)) {}

NvmlGpuUtilizationSampler::~NvmlGpuUtilizationSampler() = default;

std::optional<double> NvmlGpuUtilizationSampler::Sample() {
  nvml_abi::NvmlUtilization utilization{};
  if (nvml_->utilization_rates(nvml_->device, &utilization) != nvml_abi::kNvmlSuccess) {
    return std::nullopt;
  }
  return std::min(1.0, utilization.gpu / 100.0);
}

}  // namespace stoker
