// bench augment: the blur reference workload (docs/architecture.md, Reference workloads), one
// thread. Stoker's pipeline "to_float, gaussian_blur(ksize=11)*10" against OpenCV's
// cv::GaussianBlur chained ten times on the same images, plus the fraction of the arithmetic floor.
// torchvision's figure is measured by bench/augment_torchvision.py in the same run
// (bench/augment.sh) and passed in.
//
// Alternating rounds (Stoker, then OpenCV, in each); prints per-round figures, then
// `RESULT name=augment ...` with the median round of each side, per core (one thread), and
// the fraction of the floor (model at BlurFloor).

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
  absl::Duration length = absl::Seconds(3);  // of each measurement
  bool wall_clock = false;   // Time by the wall clock instead of the thread's CPU time.
  bool stoker_only = false;  // Only Stoker's (fused) pipeline: the reference of bench/e2e.py.
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
                 absl::Duration length, bench::TimeBase base) {
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
      length, base);
}

// OpenCV: uint8 → float32 in [0, 1], then cv::GaussianBlur ×10 with a drawn sigma, reflect-101.
double OpenCvIps(std::vector<std::vector<uint8_t>>& images, absl::Duration length,
                 bench::TimeBase base) {
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
      length, base);
}

// The floor: the operations the folded (symmetric-tap) kernel of
// augment/kernels/gaussian_blur_body.inc issues per output, per pipe, at the clock of a chain
// of dependent multiplies (bench_util.h). Per output element and blur, with R = ksize / 2:
//   vertical pass:   R + 1 multiplies/FMAs (k0·x, then k_j·(a + b) accumulated) + R adds;
//   horizontal pass: R + 1 multiplies/FMAs + R adds + 1 add (its two accumulators);
// (the same in the fused chain: it runs these passes, only on rows kept in rings);
// per output element once, ToFloat: 1 convert + 1 divide (by 255: a multiply by 1/255 differs
// from torchvision's result for 126 of the 256 values). The divider is its own unit; no core
// here divides faster than 8 floats per 3 cycles (Zen 2-4 take 3.5 per 256-bit vector, Intel
// cores 5), so ToFloat costs at least max(its FP ops / pipes, 3 cycles per 8 floats).
// Pipes: every x86-64 core here has 2 vector pipes that multiply/FMA; AMD Zen has 2 more that
// only add (4 FP pipes), Intel's Skylake-class cores add on the same 2 (taken as 2 FP pipes:
// optimistic for newer Intel cores with separate adders, which would make the floor higher).
// Lanes per pipe per cycle: 16 for AVX-512 on Intel, 8 for AVX-512 on AMD Zen 4 (a 256-bit
// datapath: a 512-bit op takes two cycles), 8 for AVX2, 4 for the baseline SSE build.
// Cycles per vector of outputs = max(multiplies / 2, all FP ops / FP pipes). Loads, stores and
// cache misses are not counted, so the floor is a bound no kernel beats, not a prediction.
struct FloorModel {
  const char* kernel = "portable";
  double lanes = 4;
  double fp_pipes = 2;
  double cycles_per_image = 0;
  double ips = 0;
};

FloorModel BlurFloor(double clock_hz) {
  FloorModel model;
  const bool amd = __builtin_cpu_is("amd");
  if (blur_internal::CpuHasAvx512()) {
    model.kernel = "avx512";
    model.lanes = amd ? 8 : 16;
  } else if (blur_internal::CpuHasAvx2Fma()) {
    model.kernel = "avx2+fma";
    model.lanes = 8;
  }
  model.fp_pipes = amd ? 4 : 2;
  constexpr double kMulPipes = 2;
  constexpr double R = kKsize / 2;
  const double blur_mul = 2 * (R + 1), blur_add = 2 * R + 1;
  const double cycles_per_blur =
      std::max(blur_mul / kMulPipes, (blur_mul + blur_add) / model.fp_pipes);
  constexpr double kDivideCyclesPerFloat = 3.0 / 8;
  const double cycles_to_float =
      std::max({1 / kMulPipes, 2 / model.fp_pipes, model.lanes * kDivideCyclesPerFloat});
  const double vectors = double{kSide} * kSide * kChannels / model.lanes;
  model.cycles_per_image = vectors * (kBlurs * cycles_per_blur + cycles_to_float);
  model.ips = clock_hz / model.cycles_per_image;
  return model;
}

// Per round, back to back: Stoker, OpenCV, Stoker unfused (only Stoker with --stoker_only).
struct Rounds {
  std::vector<double> stoker, opencv, unfused, vs_opencv, fused_vs_unfused;
};

Rounds RunRounds(const Config& config, const Pipeline& pipeline, const Pipeline& unfused,
                 std::vector<std::vector<uint8_t>>& images) {
  const bench::TimeBase base =
      config.wall_clock ? bench::TimeBase::kWall : bench::TimeBase::kThreadCpu;
  std::printf("img/s per second of %s\n",
              config.wall_clock ? "wall-clock time" : "thread CPU time");
  Rounds r;
  for (uint32_t round = 0; round < config.rounds; ++round) {
    r.stoker.push_back(StokerIps(pipeline, images, config.length, base));
    if (config.stoker_only) {
      std::printf("round %u: stoker %.0f img/s\n", round + 1, r.stoker.back());
      continue;
    }
    r.opencv.push_back(OpenCvIps(images, config.length, base));
    r.unfused.push_back(StokerIps(unfused, images, config.length, base));
    // Ratios per round: each round's sides ran back to back, so a round's ratio is less exposed
    // to the shared machine's load than either figure; the RESULT gives their medians.
    r.vs_opencv.push_back(r.stoker.back() / r.opencv.back());
    r.fused_vs_unfused.push_back(r.stoker.back() / r.unfused.back());
    std::printf(
        "round %u: stoker %.0f img/s, opencv %.0f img/s, stoker unfused %.0f img/s; ratio %.3f, "
        "fused/unfused %.3f\n",
        round + 1, r.stoker.back(), r.opencv.back(), r.unfused.back(), r.vs_opencv.back(),
        r.fused_vs_unfused.back());
  }
  return r;
}

int Main(int argc, char** argv) {
  Config config;
  FlagSet flags("augment_bench", "Blur reference workload: Stoker vs OpenCV (and torchvision).");
  flags.Add("seconds", &config.length, absl::Seconds(1), "Length of each measurement");
  flags.Add("wall_clock", &config.wall_clock,
            "Time by the wall clock (default: the benchmark thread's CPU time)");
  flags.Add("stoker_only", &config.stoker_only,
            "Measure only Stoker's pipeline (RESULT: stoker_ips_per_core and the kernel)");
  flags.Add("rounds", &config.rounds,
            "Alternating rounds (each measures both sides); medians count");
  flags.Add("images", &config.images, "Distinct source images");
  flags.Add("torchvision_ips", &config.torchvision_ips,
            "torchvision's images/s from bench/augment_torchvision.py (0: not measured)");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;

  cv::setNumThreads(1);
  auto spec = ParsePipelineText("to_float, gaussian_blur(ksize=11)*10");
  const ImageShape input{kSide, kSide, kChannels, PixelType::kUint8};
  PipelineOptions unfused_options;
  unfused_options.fuse_blur_chains = false;
  auto pipeline = Pipeline::Compile(*spec, input);
  auto unfused = Pipeline::Compile(*spec, InputFormat::Decoded(input), unfused_options);
  if (!pipeline.ok() || !unfused.ok()) {
    std::fprintf(stderr, "augment_bench: %s\n",
                 (pipeline.ok() ? unfused : pipeline).status().ToString().c_str());
    return 1;
  }
  std::vector<std::vector<uint8_t>> images = SourceImages(config.images);
  const Rounds r = RunRounds(config, *pipeline, *unfused, images);
  const double stoker_ips = bench::Median(r.stoker), opencv_ips = bench::Median(r.opencv);
  if (config.stoker_only) {
    std::printf("RESULT name=augment kernel=%s stoker_ips_per_core=%.1f\n", BlurFloor(0).kernel,
                stoker_ips);
    return 0;
  }
  const double clock_hz = bench::MeasuredClockHz();
  const FloorModel floor = BlurFloor(clock_hz);
  std::printf(
      "clock %.2f GHz from a chain of dependent multiplies (system reports %.2f GHz); %s kernel, "
      "%.0f lanes per pipe, %.0f FP pipes: %.2f Mcycles per image, floor %.0f img/s per core\n",
      clock_hz / 1e9, bench::ReportedClockHz() / 1e9, floor.kernel, floor.lanes, floor.fp_pipes,
      floor.cycles_per_image / 1e6, floor.ips);
  const double tv = config.torchvision_ips;
  // One thread each: every img/s figure is per core.
  std::printf(
      "RESULT name=augment kernel=%s stoker_ips_per_core=%.1f torchvision_ips_per_core=%.2f "
      "opencv_ips_per_core=%.1f unfused_ips_per_core=%.1f floor_ips_per_core=%.0f "
      "vs_torchvision=%.2f vs_opencv=%.3f fused_vs_unfused=%.3f floor_fraction=%.3f "
      "clock_ghz=%.2f\n",
      floor.kernel, stoker_ips, tv, opencv_ips, bench::Median(r.unfused), floor.ips,
      tv > 0 ? stoker_ips / tv : 0.0, bench::Median(r.vs_opencv), bench::Median(r.fused_vs_unfused),
      floor.ips > 0 ? stoker_ips / floor.ips : 0.0, clock_hz / 1e9);
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Main(argc, argv); }
