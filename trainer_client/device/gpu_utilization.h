#ifndef STOKER_TRAINER_CLIENT_DEVICE_GPU_UTILIZATION_H_
#define STOKER_TRAINER_CLIENT_DEVICE_GPU_UTILIZATION_H_

// The utilization of the GPU a trainer feeds, read through NVML (the driver's management
// library): the LoaderEnv::gpu_utilization of a program that feeds a CUDA device (the Python
// module's, for device="cuda:N"). NVML is loaded at run time with dlopen and never linked:
// binaries must start on machines without a GPU or driver (docs/architecture.md, Rules the code
// keeps). Anything missing — the library, a symbol, the device — or any NVML error means
// "unknown", never an error.

#include <memory>
#include <optional>
#include <string>

#include "trainer_client/loader_env.h"

namespace stoker {

// The NVML of an installed NVIDIA driver.
inline constexpr char kNvmlLibrary[] = "libnvidia-ml.so.1";

// Thread-compatible (the Loader samples on one thread at a time).
class NvmlGpuUtilizationSampler : public GpuUtilizationSampler {
 public:
  // A sampler of the GPU at `pci_bus_id` (as cudaDeviceGetPCIBusId writes it, e.g.
  // "0000:3b:00.0"), or nullptr when `library` does not load, lacks a symbol, NVML does not
  // initialize or does not know the device.
  static std::unique_ptr<NvmlGpuUtilizationSampler> Open(const std::string& pci_bus_id,
                                                         const std::string& library = kNvmlLibrary);
  ~NvmlGpuUtilizationSampler() override;
  NvmlGpuUtilizationSampler(const NvmlGpuUtilizationSampler&) = delete;
  NvmlGpuUtilizationSampler& operator=(const NvmlGpuUtilizationSampler&) = delete;

  // The fraction of NVML's last sample period (1/6 s to 1 s, by GPU) in which a kernel ran on the
  // GPU, in [0, 1]; nullopt when NVML fails to say.
  std::optional<double> Sample() override;

 private:
  struct Nvml;
  explicit NvmlGpuUtilizationSampler(std::unique_ptr<Nvml> nvml);

  std::unique_ptr<Nvml> nvml_;
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_DEVICE_GPU_UTILIZATION_H_
