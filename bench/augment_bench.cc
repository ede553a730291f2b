// bench augment: the blur reference workload (DESIGN.md §6), one thread. Stoker's pipeline
// "to_float, gaussian_blur(ksize=11)*10" against OpenCV's cv::GaussianBlur chained ten times on
// the same images, plus the fraction of the arithmetic floor. torchvision's figure is measured by
// bench/augment_torchvision.py in the same run (bench/augment.sh) and passed in.
//
// Prints per-round figures, then `RESULT name=augment ...` (best round of each side).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "augment/kernels/gaussian_blur_variants.h"
#include "augment/pipeline.h"
#include "augment/pipeline_text.h"
#include "bench/bench_util.h"
#include "common/counter_rng.h"
#include "common/flags.h"
#include "opencv2/core.hpp"
#include "opencv2/imgproc.hpp"

namespace stoker {
namespace {

constexpr uint32_t kSide = 224;
constexpr uint32_t kChannels = 3;
constexpr int kKsize = 11;
constexpr int kBlurs = 10;
constexpr float kSigmaMin = 0.1f, kSigmaMax = 2.0f;  // torchvision's GaussianBlur default.

struct Config {
  double seconds = 3;
  uint32_t rounds = 3;
  uint32_t images = 16;
  double torchvision_ips = 0;
};

std::vector<std::vector<uint8_t>> SourceImages(uint32_t count) {
  std::vector<std::vector<uint8_t>> images(count);
  for (uint32_t i = 0; i < count; ++i) {
    CounterRng rng(KeyOf(kContentDomain, 1, i));
    images[i].resize(size_t{kSide} * kSide * kChannels);
    for (uint8_t& p : images[i]) p = static_cast<uint8_t>(rng.UniformInt(256));
  }
  return images;
}

// Stoker: the compiled pipeline, as a worker thread runs it.
double StokerIps(const Pipeline& pipeline, std::vector<std::vector<uint8_t>>& images,
                 double seconds) {
  PipelineWorkspace workspace;
  std::vector<float> out(pipeline.output_bytes_per_sample() / sizeof(float));
  uint64_t index = 0;
  const ImageShape shape{kSide, kSide, kChannels, PixelType::kUint8};
  return bench::ItemsPerSecond(
      [&] {
        CounterRng rng = SampleRng(1, 0, index);
        std::vector<uint8_t>& image = images[index++ % images.size()];
        (void)pipeline.Run(ImageView{image.data(), shape}, &rng, &workspace,
                           reinterpret_cast<uint8_t*>(out.data()));
      },
      seconds);
}

// OpenCV: uint8 → float32 in [0, 1], then cv::GaussianBlur ×10 with a drawn sigma, reflect-101.
double OpenCvIps(std::vector<std::vector<uint8_t>>& images, double seconds) {
  cv::Mat a(kSide, kSide, CV_32FC3), b(kSide, kSide, CV_32FC3);
  CounterRng rng(42);
  uint64_t index = 0;
  return bench::ItemsPerSecond(
      [&] {
        cv::Mat src(kSide, kSide, CV_8UC3, images[index++ % images.size()].data());
        src.convertTo(a, CV_32F, 1.0 / 255);
        for (int i = 0; i < kBlurs; ++i) {
          const double sigma = rng.UniformFloat(kSigmaMin, kSigmaMax);
          cv::GaussianBlur(a, b, cv::Size(kKsize, kKsize), sigma, sigma, cv::BORDER_REFLECT_101);
          std::swap(a, b);
        }
      },
      seconds);
}

int Main(int argc, char** argv) {
  Config config;
  FlagSet flags("augment_bench", "Blur reference workload: Stoker vs OpenCV (and torchvision).");
  flags.Add("seconds", &config.seconds, "Seconds per measurement");
  flags.Add("rounds", &config.rounds, "Rounds (each measures both sides); the best counts");
  flags.Add("images", &config.images, "Distinct source images");
  flags.Add("torchvision_ips", &config.torchvision_ips,
            "torchvision's images/s from bench/augment_torchvision.py (0: not measured)");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;

  cv::setNumThreads(1);
  auto spec = ParsePipelineText("to_float, gaussian_blur(ksize=11)*10");
  auto pipeline =
      Pipeline::Compile(*spec, ImageShape{kSide, kSide, kChannels, PixelType::kUint8});
  if (!pipeline.ok()) {
    std::fprintf(stderr, "augment_bench: %s\n", pipeline.status().ToString().c_str());
    return 1;
  }
  std::vector<std::vector<uint8_t>> images = SourceImages(config.images);
  double stoker_ips = 0, opencv_ips = 0;
  for (uint32_t round = 0; round < config.rounds; ++round) {
    const double s = StokerIps(*pipeline, images, config.seconds);
    const double o = OpenCvIps(images, config.seconds);
    std::printf("round %u: stoker %.0f img/s, opencv %.0f img/s\n", round + 1, s, o);
    stoker_ips = std::max(stoker_ips, s);
    opencv_ips = std::max(opencv_ips, o);
  }
  // Arithmetic floor: 2·k multiply-adds per pixel per channel per blur, at the core's FMA
  // width (two 8-lane FMA pipes with AVX2, else two 4-lane SSE pipes) and measured clock.
  const double clock_hz = bench::MeasuredClockHz();
  const double fma_per_cycle = blur_internal::CpuHasAvx2Fma() ? 16 : 8;
  const double fma_per_image = 2.0 * kKsize * kSide * kSide * kChannels * kBlurs;
  const double floor_ips = clock_hz * fma_per_cycle / fma_per_image;
  std::printf("clock %.2f GHz, %s kernel, floor %.0f img/s\n", clock_hz / 1e9,
              blur_internal::CpuHasAvx2Fma() ? "avx2+fma" : "portable", floor_ips);
  const double tv = config.torchvision_ips;
  std::printf(
      "RESULT name=augment stoker_ips=%.1f torchvision_ips=%.2f opencv_ips=%.1f "
      "vs_torchvision=%.2f vs_opencv=%.3f floor_fraction=%.3f\n",
      stoker_ips, tv, opencv_ips, tv > 0 ? stoker_ips / tv : 0.0, stoker_ips / opencv_ips,
      floor_ips > 0 ? stoker_ips / floor_ips : 0.0);
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Main(argc, argv); }
