// bench h2d (label gpu): does the device path hide the host-to-device copy behind compute?
//
// A trainer step is stood in for by a kernel of fixed duration (bench/h2d_compute.cuh) that
// reads the converted batch. Three measurements on the same batches (uint8 [64, 224, 224, 3],
// 9.6 MB, in pageable memory as gRPC leaves them):
//   - peak: cudaMemcpyAsync from pinned memory, back to back (the copy engine's ceiling);
//   - feeder: DeviceFeeder::Convert back to back (memcpy into pinned staging, the copy and the
//     uint8 HWC → float32 CHW kernel), in uint8 bytes per second;
//   - steps: compute alone, then compute with the next batch converted while the current one
//     computes (the pattern a loader prefetching one batch follows; resident_batches = 2), each
//     step ending with a stream synchronize as a trainer reading its loss does.
// Prints `RESULT name=h2d ... overlap_ratio=overlapped/compute copy_vs_peak=feeder/peak`.
// Exits 77 (CTest's skip code) when no CUDA device can be used.

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/h2d_compute.cuh"
#include "common/flags.h"
#include "trainer_client/batch.h"
#include "trainer_client/device/cuda/cuda_feeder.h"
#include "trainer_client/device/device_feeder.h"
#include "trainer_client/device/testing/hwc_batch.h"

namespace stoker {
namespace {

constexpr int kSkipExitCode = 77;

bool Check(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return true;
  std::fprintf(stderr, "h2d_bench: %s: %s\n", what, cudaGetErrorString(error));
  return false;
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Pinned host → device copies of `bytes`, back to back on one stream: bytes per second.
std::optional<double> PinnedPeak(size_t bytes, int copies) {
  void* pinned = nullptr;
  void* device = nullptr;
  cudaStream_t stream = nullptr;
  std::optional<double> rate;
  if (Check(cudaHostAlloc(&pinned, bytes, cudaHostAllocDefault), "cudaHostAlloc") &&
      Check(cudaMalloc(&device, bytes), "cudaMalloc") &&
      Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate")) {
    std::fill_n(static_cast<char*>(pinned), bytes, 1);
    bool ok = Check(cudaMemcpyAsync(device, pinned, bytes, cudaMemcpyHostToDevice, stream),
                    "warm-up copy") &&
              Check(cudaStreamSynchronize(stream), "sync");
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; ok && i < copies; ++i) {
      ok = Check(cudaMemcpyAsync(device, pinned, bytes, cudaMemcpyHostToDevice, stream), "copy");
    }
    if (ok && Check(cudaStreamSynchronize(stream), "sync")) {
      rate = static_cast<double>(bytes) * copies / Seconds(start);
    }
  }
  if (stream != nullptr) cudaStreamDestroy(stream);
  if (device != nullptr) cudaFree(device);
  if (pinned != nullptr) cudaFreeHost(pinned);
  return rate;
}

// Convert back to back, each tensor released at once: uint8 input bytes per second.
std::optional<double> FeederRate(DeviceFeeder& feeder, const std::vector<Batch>& batches,
                                 int conversions) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < conversions; ++i) {
    absl::StatusOr<DeviceTensor> tensor = feeder.Convert(batches[i % batches.size()]);
    if (!tensor.ok()) {
      std::fprintf(stderr, "h2d_bench: Convert: %s\n", tensor.status().ToString().c_str());
      return std::nullopt;
    }
  }
  if (!Check(cudaDeviceSynchronize(), "sync")) return std::nullopt;
  return static_cast<double>(batches[0].size_bytes()) * conversions / Seconds(start);
}

struct StepKernel {
  cudaStream_t stream = nullptr;
  float* sink = nullptr;
  int blocks = 0;
  int iterations = 0;
};

// Seconds per step of the fake compute alone, reading `input` (a float batch on the device).
std::optional<double> ComputeAlone(const StepKernel& kernel, const float* input, size_t count,
                                   int steps) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) {
    if (!Check(bench::LaunchFakeStep(input, count, kernel.iterations, kernel.sink, kernel.blocks,
                              kernel.stream),
               "launch") ||
        !Check(cudaStreamSynchronize(kernel.stream), "sync")) {
      return std::nullopt;
    }
  }
  return Seconds(start) / steps;
}

// Seconds per step when each step's batch comes from the feeder, the next one converted while
// the current one computes.
std::optional<double> Overlapped(const StepKernel& kernel, DeviceFeeder& feeder,
                                 const std::vector<Batch>& batches, int steps) {
  absl::StatusOr<DeviceTensor> next = feeder.Convert(batches[0]);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) {
    if (!next.ok()) {
      std::fprintf(stderr, "h2d_bench: Convert: %s\n", next.status().ToString().c_str());
      return std::nullopt;
    }
    DeviceTensor current = *std::move(next);
    const size_t count = current.batch().size_bytes();
    if (!Check(cudaStreamWaitEvent(kernel.stream, static_cast<cudaEvent_t>(current.ready_event()),
                                   0),
               "wait") ||
        !Check(bench::LaunchFakeStep(current.data(), count, kernel.iterations, kernel.sink,
                              kernel.blocks, kernel.stream),
               "launch")) {
      return std::nullopt;
    }
    next = feeder.Convert(batches[(i + 1) % batches.size()]);
    current.Release(kernel.stream);
    if (!Check(cudaStreamSynchronize(kernel.stream), "sync")) return std::nullopt;
  }
  return Seconds(start) / steps;
}

int Main(int argc, char** argv) {
  double step_ms = 20;
  uint32_t steps = 100, batch_size = 64;
  FlagSet flags("h2d_bench", "Overlap of host-to-device copies with compute (needs a GPU).");
  flags.Add("step_ms", &step_ms, "Duration of the fake compute step, milliseconds");
  flags.Add("steps", &steps, "Steps per measurement");
  flags.Add("batch", &batch_size, "Images per batch (224x224x3 uint8)");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (CudaDeviceCount() == 0) {
    std::printf("h2d_bench: no usable CUDA device; nothing measured\n");
    return kSkipExitCode;
  }
  cudaDeviceProp properties{};
  if (!Check(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties")) return 1;
  std::printf("device: %s, %d SMs\n", properties.name, properties.multiProcessorCount);

  const int n = static_cast<int>(batch_size), h = 224, w = 224, c = 3;
  std::vector<Batch> batches;
  for (int seed = 0; seed < 4; ++seed) batches.push_back(MakeHwcBatch(n, h, w, c, seed));
  const size_t bytes = batches[0].size_bytes();

  const std::optional<double> peak = PinnedPeak(bytes, 50);
  DeviceOptions options;
  options.device = "cuda:0";
  options.mean = {0.485f, 0.456f, 0.406f};
  options.std = {0.229f, 0.224f, 0.225f};
  absl::StatusOr<std::unique_ptr<DeviceFeeder>> feeder = DeviceFeeder::Create(options);
  if (!peak || !feeder.ok()) {
    if (!feeder.ok()) std::fprintf(stderr, "h2d_bench: %s\n", feeder.status().ToString().c_str());
    return 1;
  }
  FeederRate(**feeder, batches, 4);  // warm-up: allocates the slots
  const std::optional<double> feeder_rate = FeederRate(**feeder, batches, 50);

  StepKernel kernel;
  kernel.blocks = properties.multiProcessorCount * 8;
  float* float_batch = nullptr;
  if (!feeder_rate ||
      !Check(cudaStreamCreateWithFlags(&kernel.stream, cudaStreamNonBlocking), "stream") ||
      !Check(cudaMalloc(&kernel.sink, sizeof(float) * kernel.blocks * 256), "cudaMalloc") ||
      !Check(cudaMalloc(&float_batch, bytes * sizeof(float)), "cudaMalloc") ||
      !Check(cudaMemset(float_batch, 0, bytes * sizeof(float)), "cudaMemset")) {
    return 1;
  }
  // Calibrate the iterations to step_ms: time a short step, scale, check once more.
  kernel.iterations = 1 << 16;
  for (int round = 0; round < 3; ++round) {
    const std::optional<double> seconds = ComputeAlone(kernel, float_batch, bytes, 5);
    if (!seconds) return 1;
    kernel.iterations = std::max(
        1, static_cast<int>(kernel.iterations * (step_ms / 1000.0) / std::max(*seconds, 1e-6)));
  }
  const std::optional<double> compute = ComputeAlone(kernel, float_batch, bytes, steps);
  const std::optional<double> overlapped = Overlapped(kernel, **feeder, batches, steps);
  if (!compute || !overlapped) return 1;

  std::printf("pinned H2D peak: %.2f GB/s; feeder (memcpy to pinned + H2D + convert): %.2f GB/s\n",
              *peak / 1e9, *feeder_rate / 1e9);
  std::printf("step: compute alone %.3f ms, with overlapped copies %.3f ms (%u steps, batch %u)\n",
              *compute * 1e3, *overlapped * 1e3, steps, batch_size);
  std::printf(
      "RESULT name=h2d compute_ms=%.3f overlapped_ms=%.3f overlap_ratio=%.4f peak_gbps=%.2f "
      "feeder_gbps=%.2f copy_vs_peak=%.3f\n",
      *compute * 1e3, *overlapped * 1e3, *overlapped / *compute, *peak / 1e9, *feeder_rate / 1e9,
      *feeder_rate / *peak);
  cudaFree(float_batch);
  cudaFree(kernel.sink);
  cudaStreamDestroy(kernel.stream);
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Main(argc, argv); }
