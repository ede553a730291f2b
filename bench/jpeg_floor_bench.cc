// bench jpeg-floor: where a worker's CPU goes per image of the e2e JPEG workload (the generated
// 500x375 set of bench/jpeg-pipeline.sh), stage by stage, and from the stages the floor: the
// least total CPU per image Stoker could reach with today's decoder and kernels, against
// torchvision's measured CPU per image (bench/e2e_torchvision.py, passed in by jpeg-floor.sh).
//
// Stages, one thread, CPU time of this thread per image (CLOCK_THREAD_CPUTIME_ID), over the same
// images and samples each round, stage order rotated every round, medians of the rounds:
//   gates     ImageDecoder::ReadHeader (magic bytes, pixel budget, scan count);
//   whole     gates + TurboJPEG decode of the whole image;
//   eighth    gates + decode at 1/8 scale: Huffman decoding of the whole scan with an almost free
//             IDCT (DC only), upsampling and color conversion of 1/64 of the pixels: the
//             entropy-decoding floor of any decode of a sequential JPEG;
//   fused     gates + random_resized_crop(224)'s window drawn + that window decoded alone
//             (what a worker's decode stage runs, augment/pipeline.h);
//   resize    the bilinear resize of that window to 224x224 (timed alone, per call, the
//             clock's own cost subtracted);
//   flip      horizontal_flip of 224x224x3 uint8 in place;
//   tail      to_float + normalize to float32 CHW (the executor's table tail) into a batch-sized
//             buffer;
//   copy_u8, copy_f32   one memcpy of the sample's output bytes within a 64-sample batch buffer
//             (the cost of one pass of the payload through memory: the kernel's TCP copies on
//             send and receive are two such passes);
//   pipeline_u8, pipeline_f32   Pipeline::Run of the whole e2e pipelines (decode,
//             random_resized_crop(224), horizontal_flip[, to_float, normalize, CHW]).
// Floors (the model): best_u8 = fused + resize + flip + 2 copy_u8 (no serving cost, no client
// cost beyond the kernel's receive copy); best_f32 adds the tail and uses copy_f32;
// bound_* leave the resize out too (a decode alone). best_vs_torchvision_* = torchvision's CPU
// per image / best_*. Prints `RESULT name=jpeg-floor ...`.
// --restart_markers: every stage works on the JPEGs as `stoker-pack --restart-markers` stores
// them (rewritten in memory by AddJpegRestartMarkers): the files the workers then read, so the
// eighth stage is the floor of those same files.

#include <dirent.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "augment/kernels/decode.h"
#include "augment/kernels/geometry.h"
#include "augment/kernels/jpeg_restart_markers.h"
#include "augment/op.h"
#include "augment/op_registry.h"
#include "augment/pipeline.h"
#include "augment/pipeline_text.h"
#include "bench/bench_util.h"
#include "common/counter_rng.h"
#include "common/flags.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

constexpr DecodeLimits kLimits{kDecodeDefaultMaxPixels, kDecodeDefaultMaxScans};
constexpr char kJpeg[] = "decode, random_resized_crop(height=224, width=224), horizontal_flip";
constexpr char kTail[] = "to_float, normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])";
constexpr ImageShape kOut{224, 224, 3, PixelType::kUint8};
constexpr uint32_t kBatch = 64;

double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

// The first `count` JPEGs of `root`'s class folders, in name order.
std::vector<std::vector<uint8_t>> LoadJpegs(const std::string& root, size_t count) {
  std::vector<std::string> paths;
  std::vector<std::string> classes;
  if (DIR* dir = opendir(root.c_str())) {
    while (dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') classes.push_back(root + "/" + entry->d_name);
    }
    closedir(dir);
  }
  std::sort(classes.begin(), classes.end());
  for (const std::string& folder : classes) {
    std::vector<std::string> files;
    if (DIR* dir = opendir(folder.c_str())) {
      while (dirent* entry = readdir(dir)) {
        if (entry->d_name[0] != '.') files.push_back(folder + "/" + entry->d_name);
      }
      closedir(dir);
    }
    std::sort(files.begin(), files.end());
    paths.insert(paths.end(), files.begin(), files.end());
  }
  // Spread over the classes: every (size / count)-th file.
  std::vector<std::vector<uint8_t>> jpegs;
  const size_t step = std::max<size_t>(1, paths.size() / std::max<size_t>(count, 1));
  for (size_t i = 0; i < paths.size() && jpegs.size() < count; i += step) {
    std::ifstream file(paths[i], std::ios::binary);
    jpegs.emplace_back(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }
  return jpegs;
}

Pipeline CompileOrDie(const std::string& text, const InputFormat& input,
                      stoker::v1::Layout layout) {
  absl::StatusOr<stoker::v1::PipelineSpec> spec = ParsePipelineText(text);
  if (spec.ok()) spec->set_output_layout(layout);
  absl::StatusOr<Pipeline> pipeline =
      spec.ok() ? Pipeline::Compile(*spec, input) : absl::StatusOr<Pipeline>(spec.status());
  if (!pipeline.ok()) {
    std::fprintf(stderr, "jpeg_floor_bench: %s\n",
                 std::string(pipeline.status().message()).c_str());
    std::exit(1);
  }
  return std::move(*pipeline);
}

// One stage: processes image `i` as sample `index`; returns the CPU seconds it timed itself
// (stages that time only part of the call), or a negative value: the whole call counts.
using Stage = std::function<absl::StatusOr<double>(size_t i, uint64_t index)>;

struct NamedStage {
  NamedStage(const char* name, Stage run) : name(name), run(std::move(run)) {}
  const char* name;
  Stage run;
  std::vector<double> us_per_image;  // One per round.
};

// Runs `stage` over every image; returns CPU microseconds per image.
double RunStage(const NamedStage& stage, size_t images, uint64_t first_index) {
  double self_timed = 0;
  bool whole_calls = false;
  const double start = ThreadCpuSeconds();
  for (size_t i = 0; i < images; ++i) {
    const absl::StatusOr<double> seconds = stage.run(i, first_index + i);
    if (!seconds.ok()) {
      std::fprintf(stderr, "jpeg_floor_bench: %s: %s\n", stage.name,
                   std::string(seconds.status().message()).c_str());
      std::exit(1);
    }
    if (*seconds < 0)
      whole_calls = true;
    else
      self_timed += *seconds;
  }
  const double whole = ThreadCpuSeconds() - start;
  return 1e6 * (whole_calls ? whole : self_timed) / static_cast<double>(images);
}

// The CPU-clock read pair's own cost, seconds (subtracted from stages timed per call).
double ClockPairSeconds() {
  constexpr int kReads = 20000;
  const double start = ThreadCpuSeconds();
  for (int i = 0; i < kReads; ++i) ThreadCpuSeconds();
  return 2 * (ThreadCpuSeconds() - start) / kReads;
}

// What the stages work on: the pipelines, one decoder and the buffers, reused per image.
struct StageState {
  explicit StageState(const std::vector<std::vector<uint8_t>>& jpegs)
      : jpegs(jpegs),
        u8(CompileOrDie(kJpeg, InputFormat::Encoded(), stoker::v1::LAYOUT_HWC)),
        f32(CompileOrDie(std::string(kJpeg) + ", " + kTail, InputFormat::Encoded(),
                         stoker::v1::LAYOUT_CHW)),
        tail(CompileOrDie(kTail, InputFormat::Decoded(kOut), stoker::v1::LAYOUT_CHW)),
        clock_pair(ClockPairSeconds()) {}

  template <typename Batch>
  static auto Slot(Batch& batch, size_t i) {
    return batch.data() + (i % kBatch) * kOut.elements();
  }
  absl::StatusOr<EncodedHeader> Header(size_t i) { return decoder.ReadHeader(jpegs[i], kLimits); }
  // The fused decode of sample `index`'s window; sets *window to its place in window_buffer.
  absl::Status Fused(size_t i, uint64_t index, PixelRect* window) {
    ASSIGN_OR_RETURN(const EncodedHeader h, Header(i));
    CounterRng rng = SampleRng(2026, 0, index);
    const PixelRect drawn = *u8.op(1).DrawWindow(ScaledSize(h, 1, 3), &rng);
    return decoder.DecodeJpegRegion(jpegs[i], drawn, 1, 3, &window_buffer, window);
  }
  Stage DecodeAt(uint32_t d) {
    return [this, d](size_t i, uint64_t) -> absl::StatusOr<double> {
      ASSIGN_OR_RETURN(const EncodedHeader h, Header(i));
      whole.Reshape(ScaledSize(h, d, 3));
      RETURN_IF_ERROR(decoder.Decode(jpegs[i], whole.view()));
      return -1.0;
    };
  }

  const std::vector<std::vector<uint8_t>>& jpegs;
  const Pipeline u8, f32, tail;
  const double clock_pair;
  ImageDecoder decoder;
  ImageBuffer whole, window_buffer;
  PipelineWorkspace workspace;
  std::vector<uint8_t> image = std::vector<uint8_t>(kOut.elements());
  const ImageView image_view{image.data(), kOut};
  std::vector<float> batch_f32 = std::vector<float>(kOut.elements() * kBatch);
  std::vector<float> batch_f32_copy = batch_f32;
  std::vector<uint8_t> batch_u8 = std::vector<uint8_t>(kOut.elements() * kBatch);
  std::vector<uint8_t> batch_u8_copy = batch_u8;
};

std::vector<NamedStage> MakeStages(StageState& s) {
  const Op& crop = s.u8.op(1);
  return {
      {"gates",
       [&s](size_t i, uint64_t) -> absl::StatusOr<double> {
         RETURN_IF_ERROR(s.Header(i).status());
         return -1.0;
       }},
      {"whole", s.DecodeAt(1)},
      {"eighth", s.DecodeAt(8)},
      {"fused",
       [&s](size_t i, uint64_t index) -> absl::StatusOr<double> {
         PixelRect window;
         RETURN_IF_ERROR(s.Fused(i, index, &window));
         return -1.0;
       }},
      {"resize",
       [&s, &crop](size_t i, uint64_t index) -> absl::StatusOr<double> {
         PixelRect window;
         RETURN_IF_ERROR(s.Fused(i, index, &window));
         const double start = ThreadCpuSeconds();
         RETURN_IF_ERROR(crop.ApplyToWindow(s.window_buffer.view(), window, s.image_view));
         return std::max(0.0, ThreadCpuSeconds() - start - s.clock_pair / 2);
       }},
      {"flip",
       [&s](size_t, uint64_t) -> absl::StatusOr<double> {
         HorizontalFlip(s.image_view, s.image_view);
         return -1.0;
       }},
      {"tail",
       [&s](size_t i, uint64_t index) -> absl::StatusOr<double> {
         CounterRng rng = SampleRng(2026, 0, index);
         RETURN_IF_ERROR(s.tail.Run(s.image_view, &rng, &s.workspace,
                                    reinterpret_cast<uint8_t*>(StageState::Slot(s.batch_f32, i))));
         return -1.0;
       }},
      {"copy_u8",
       [&s](size_t i, uint64_t) -> absl::StatusOr<double> {
         std::memcpy(StageState::Slot(s.batch_u8_copy, i), StageState::Slot(s.batch_u8, i),
                     kOut.elements());
         return -1.0;
       }},
      {"copy_f32",
       [&s](size_t i, uint64_t) -> absl::StatusOr<double> {
         std::memcpy(StageState::Slot(s.batch_f32_copy, i), StageState::Slot(s.batch_f32, i),
                     kOut.elements() * 4);
         return -1.0;
       }},
      {"pipeline_u8",
       [&s](size_t i, uint64_t index) -> absl::StatusOr<double> {
         CounterRng rng = SampleRng(2026, 0, index);
         RETURN_IF_ERROR(s.u8.Run(SampleInput::Encoded(s.jpegs[i]), &rng, &s.workspace,
                                  StageState::Slot(s.batch_u8, i)));
         return -1.0;
       }},
      {"pipeline_f32",
       [&s](size_t i, uint64_t index) -> absl::StatusOr<double> {
         CounterRng rng = SampleRng(2026, 0, index);
         RETURN_IF_ERROR(s.f32.Run(SampleInput::Encoded(s.jpegs[i]), &rng, &s.workspace,
                                   reinterpret_cast<uint8_t*>(StageState::Slot(s.batch_f32, i))));
         return -1.0;
       }},
  };
}

// The best pipelines and bounds from the stages' medians, against torchvision's figures.
void PrintResult(const std::vector<NamedStage>& stages, size_t images, double tv_u8_ms,
                 double tv_f32_ms) {
  const auto us = [&](const char* name) {
    for (const NamedStage& stage : stages) {
      if (std::strcmp(stage.name, name) == 0) return bench::Median(stage.us_per_image);
    }
    return 0.0;
  };
  const double best_u8 = us("fused") + us("resize") + us("flip") + 2 * us("copy_u8");
  const double best_f32 = us("fused") + us("resize") + us("flip") + us("tail") + 2 * us("copy_f32");
  const double bound_u8 = us("fused") + 2 * us("copy_u8");
  const double bound_f32 = us("fused") + 2 * us("copy_f32");
  const auto ratio = [](double tv_ms, double stoker_us) {
    return tv_ms > 0 ? 1e3 * tv_ms / stoker_us : 0.0;
  };
  std::printf("RESULT name=jpeg-floor images=%zu", images);
  for (const NamedStage& stage : stages) std::printf(" %s_us=%.1f", stage.name, us(stage.name));
  std::printf(
      " best_u8_us=%.1f best_f32_us=%.1f bound_u8_us=%.1f bound_f32_us=%.1f "
      "torchvision_uint8_ms=%.3f torchvision_float32_ms=%.3f best_vs_torchvision_u8=%.2f "
      "best_vs_torchvision_f32=%.2f bound_vs_torchvision_u8=%.2f bound_vs_torchvision_f32=%.2f\n",
      best_u8, best_f32, bound_u8, bound_f32, tv_u8_ms, tv_f32_ms, ratio(tv_u8_ms, best_u8),
      ratio(tv_f32_ms, best_f32), ratio(tv_u8_ms, bound_u8), ratio(tv_f32_ms, bound_f32));
}

int Main(int argc, char** argv) {
  std::string images_dir;
  uint32_t count = 400, rounds = 5;
  double tv_u8_ms = 0, tv_f32_ms = 0;
  FlagSet flags("jpeg_floor_bench", "The e2e JPEG workload's CPU per image, stage by stage.");
  flags.Add("images", &images_dir, "The JPEG set, a folder per class");
  flags.Add("count", &count, "Images per round");
  flags.Add("rounds", &rounds, "Rounds (stage order rotated)");
  flags.Add("torchvision_uint8_ms", &tv_u8_ms, "torchvision's CPU ms per uint8 image (e2e)");
  flags.Add("torchvision_float32_ms", &tv_f32_ms, "torchvision's CPU ms per float32 image");
  bool restart_markers = false;
  flags.Add("restart_markers", &restart_markers,
            "Rewrite the JPEGs with restart markers first, as stoker-pack --restart-markers does");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  std::vector<std::vector<uint8_t>> jpegs = LoadJpegs(images_dir, count);
  if (restart_markers) {
    for (std::vector<uint8_t>& jpeg : jpegs) {
      absl::StatusOr<std::vector<uint8_t>> marked = AddJpegRestartMarkers(jpeg);
      if (!marked.ok()) {
        std::fprintf(stderr, "jpeg_floor_bench: %s\n", marked.status().ToString().c_str());
        return 1;
      }
      jpeg = *std::move(marked);
    }
  }
  if (jpegs.empty()) {
    std::fprintf(stderr, "jpeg_floor_bench: no JPEGs under --images=%s\n", images_dir.c_str());
    return 1;
  }
  StageState state(jpegs);
  std::vector<NamedStage> stages = MakeStages(state);
  std::printf("%zu JPEGs of %s%s; CPU-clock read pair %.2f us\n", jpegs.size(), images_dir.c_str(),
              restart_markers ? " with restart markers" : "", state.clock_pair * 1e6);
  for (NamedStage& stage : stages) RunStage(stage, std::min<size_t>(jpegs.size(), 16), 0);  // Warm.
  for (uint32_t round = 0; round < rounds; ++round) {
    std::printf("round %u:", round + 1);
    for (size_t k = 0; k < stages.size(); ++k) {
      NamedStage& stage = stages[(k + round) % stages.size()];
      stage.us_per_image.push_back(RunStage(stage, jpegs.size(), uint64_t{round} * jpegs.size()));
    }
    for (const NamedStage& stage : stages)
      std::printf(" %s %.1f", stage.name, stage.us_per_image.back());
    std::printf(" (us per image)\n");
  }
  PrintResult(stages, jpegs.size(), tv_u8_ms, tv_f32_ms);
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Main(argc, argv); }
