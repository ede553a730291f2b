// bench decode-crop: fused decode-and-crop (augment/pipeline.h) against the unfused path (decode
// the whole JPEG, then crop), same pipeline, same samples, one thread:
//
//   decode, random_resized_crop(224, 224, scale 0.08..1, interpolation), horizontal_flip
//
// on real-size photos: skimage's photographs (Debian's python3-skimage) upscaled (bilinear) to
// 2.1-2.9 MP and encoded at q90, 4:2:0, baseline, made here at start. Two interpolations:
// antialias (PIL's, interpolation=2: fused output byte-equal, crop only) and bilinear (0: windows
// of 2x the output or more are also decoded at a DCT scale, within the documented tolerance).
// Rounds alternate fused/unfused (order swapped every round) over the same sample list; the
// figures are medians of the rounds. Prints `RESULT name=decode-crop ...`.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "augment/kernels/decode.h"
#include "augment/kernels/resize.h"
#include "augment/op.h"
#include "augment/op_registry.h"
#include "augment/pipeline.h"
#include "augment/pipeline_text.h"
#include "augment/synthetic_images.h"
#include "bench/bench_util.h"
#include "common/clock.h"
#include "common/counter_rng.h"
#include "common/flags.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

constexpr char kSkimageDir[] = "/usr/lib/python3/dist-packages/skimage/data";

// Photos and their upscale factors: each lands between 2.1 and 2.9 megapixels.
struct PhotoSource {
  const char* name;
  double scale;
};
constexpr PhotoSource kPhotos[] = {{"retina.jpg", 1.2},
                                   {"motorcycle_left.png", 2.5},
                                   {"coffee.png", 3.0},
                                   {"chelsea.png", 4.0},
                                   {"astronaut.png", 3.0}};

constexpr DecodeLimits kLimits{50'000'000, 100};

struct Photo {
  std::string name;
  ImageShape shape;
  std::vector<uint8_t> jpeg;
};

// Decodes `name`, upscales it by `scale` (bilinear) and encodes it as JPEG q90 4:2:0.
bool MakePhoto(const PhotoSource& source, Photo* photo) {
  const std::string path = std::string(kSkimageDir) + "/" + source.name;
  std::ifstream file(path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                   std::istreambuf_iterator<char>());
  ImageDecoder decoder;
  absl::StatusOr<EncodedHeader> header = decoder.ReadHeader(bytes, kLimits);
  if (!header.ok()) {
    std::fprintf(stderr, "decode_crop_bench: %s: %s\n", path.c_str(),
                 std::string(header.status().message()).c_str());
    return false;
  }
  const ImageShape shape = ScaledSize(*header, 1, 3);
  std::vector<uint8_t> pixels(shape.elements());
  if (!decoder.Decode(bytes, ImageView{pixels.data(), shape}).ok()) return false;
  photo->name = source.name;
  photo->shape =
      ImageShape{static_cast<uint32_t>(shape.height * source.scale),
                 static_cast<uint32_t>(shape.width * source.scale), 3, PixelType::kUint8};
  std::vector<uint8_t> large(photo->shape.elements());
  const ImageView large_view{large.data(), photo->shape};
  if (!Resize(ImageView{pixels.data(), shape}, PixelRect{0, 0, shape.height, shape.width},
              Interpolation::kBilinear, large_view)
           .ok()) {
    return false;
  }
  photo->jpeg = EncodeJpeg(large_view, 90);
  return !photo->jpeg.empty();
}

double Megapixels(const ImageShape& shape) {
  return static_cast<double>(shape.height) * shape.width / 1e6;
}

Pipeline Compile(const std::string& text, bool fuse) {
  absl::StatusOr<stoker::v1::PipelineSpec> spec = ParsePipelineText(text);
  absl::StatusOr<Pipeline> pipeline =
      Pipeline::Compile(*spec, InputFormat::Encoded(), PipelineOptions{fuse});
  if (!pipeline.ok()) {
    std::fprintf(stderr, "decode_crop_bench: %s\n",
                 std::string(pipeline.status().message()).c_str());
    std::exit(1);
  }
  return std::move(*pipeline);
}

// One round's figures: images per second of the thread's CPU time (what a worker core pays;
// steadier than wall time on a shared machine) and per second of wall time.
struct Round {
  double cpu_ips;
  double wall_ips;
};

// Processes one sample (`index`) of `photo`.
using Item = std::function<absl::Status(const Photo& photo, uint64_t index)>;

// Runs `samples` samples of every photo through `item`.
Round RunRound(const Item& item, const std::vector<Photo>& photos, uint32_t samples,
               uint64_t first_index) {
  const absl::Time start = Clock::Real()->Now();
  const absl::Duration cpu_start = ThreadCpuTime();
  for (uint32_t i = 0; i < samples; ++i) {
    for (const Photo& photo : photos) {
      const absl::Status status = item(photo, first_index + i);
      if (!status.ok()) {
        std::fprintf(stderr, "decode_crop_bench: %s\n", std::string(status.message()).c_str());
        std::exit(1);
      }
    }
  }
  const double cpu = absl::ToDoubleSeconds(ThreadCpuTime() - cpu_start);
  const double wall = absl::ToDoubleSeconds(Clock::Real()->Now() - start);
  const double images = static_cast<double>(samples) * photos.size();
  return Round{images / cpu, images / wall};
}

struct Figures {
  double fused_ips, unfused_ips;  // Per CPU second, medians.
  double speedup;                 // Median of the rounds' ratios.
  double wall_speedup;
};

// Alternating rounds of `fused` and `unfused` over the same samples; medians.
Figures Compare(const Item& fused, const Item& unfused, const std::vector<Photo>& photos,
                uint32_t rounds, uint32_t samples) {
  RunRound(fused, photos, 1, 0);  // Warm-up: buffers, pages.
  RunRound(unfused, photos, 1, 0);
  std::vector<double> ips[2], ratios, wall_ratios;  // [0] fused, [1] unfused.
  for (uint32_t round = 0; round < rounds; ++round) {
    const uint64_t first = uint64_t{round} * samples;
    Round r[2];
    for (int side = 0; side < 2; ++side) {
      const int which = (side + round) % 2;
      r[which] = RunRound(which == 0 ? fused : unfused, photos, samples, first);
      ips[which].push_back(r[which].cpu_ips);
    }
    ratios.push_back(r[0].cpu_ips / r[1].cpu_ips);
    wall_ratios.push_back(r[0].wall_ips / r[1].wall_ips);
    std::printf("  round %u: fused %.1f img/s, unfused %.1f img/s (CPU time; wall: %.1f, %.1f)\n",
                round + 1, r[0].cpu_ips, r[1].cpu_ips, r[0].wall_ips, r[1].wall_ips);
  }
  return Figures{bench::Median(ips[0]), bench::Median(ips[1]), bench::Median(ratios),
                 bench::Median(wall_ratios)};
}

// The pipeline `text`, compiled with and without fusion.
Figures ComparePipeline(const std::string& text, const std::vector<Photo>& photos, uint32_t rounds,
                        uint32_t samples) {
  std::printf("%s\n", text.c_str());
  const Pipeline fused = Compile(text, true), unfused = Compile(text, false);
  PipelineWorkspace workspaces[2];
  std::vector<uint8_t> out(fused.output_bytes_per_sample());
  const auto item = [&](const Pipeline& pipeline, PipelineWorkspace* workspace) {
    return [&pipeline, workspace, &out](const Photo& photo, uint64_t index) {
      CounterRng rng = SampleRng(2026, 0, index);
      return pipeline.Run(SampleInput::Encoded(photo.jpeg), &rng, workspace, out.data());
    };
  };
  return Compare(item(fused, &workspaces[0]), item(unfused, &workspaces[1]), photos, rounds,
                 samples);
}

// The decode stage alone, on the windows random_resized_crop(224) draws for the same samples:
// the window decoded alone (DecodeJpegRegion) against the whole image (Decode).
Figures CompareDecodeStage(const std::vector<Photo>& photos, uint32_t rounds, uint32_t samples) {
  std::printf("decode stage only, random_resized_crop(224) windows\n");
  const std::unique_ptr<Op> crop =
      *CreateOp(ParsePipelineText("random_resized_crop(height=224, width=224)")->ops(0), 1,
                ImageShape{0, 0, 3, PixelType::kUint8});
  ImageDecoder decoder;
  ImageBuffer buffer;
  const auto item = [&](bool fused) {
    return [&, fused](const Photo& photo, uint64_t index) -> absl::Status {
      ASSIGN_OR_RETURN(const EncodedHeader header, decoder.ReadHeader(photo.jpeg, kLimits));
      CounterRng rng = SampleRng(2026, 0, index);
      const PixelRect window = *crop->DrawWindow(ScaledSize(header, 1, 3), &rng);
      if (!fused) {
        buffer.Reshape(ScaledSize(header, 1, 3));
        return decoder.Decode(photo.jpeg, buffer.view());
      }
      PixelRect in_buffer;
      return decoder.DecodeJpegRegion(photo.jpeg, window, 1, 3, &buffer, &in_buffer);
    };
  };
  return Compare(item(true), item(false), photos, rounds, samples);
}

int Main(int argc, char** argv) {
  uint32_t rounds = 5, samples = 16;
  FlagSet flags("decode_crop_bench", "Fused decode-and-crop vs decode-then-crop, one thread.");
  flags.Add("rounds", &rounds, "Alternating rounds per interpolation");
  flags.Add("samples", &samples, "Samples per photo per round");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;

  std::vector<Photo> photos;
  double megapixels = 0;
  for (const PhotoSource& source : kPhotos) {
    Photo photo;
    if (!MakePhoto(source, &photo)) return 1;
    std::printf("photo %s: %ux%u (%.2f MP), %zu bytes\n", photo.name.c_str(), photo.shape.width,
                photo.shape.height, Megapixels(photo.shape), photo.jpeg.size());
    megapixels += Megapixels(photo.shape) / std::size(kPhotos);
    photos.push_back(std::move(photo));
  }
  const char* kPipeline =
      "decode, random_resized_crop(height=224, width=224, scale_min=0.08, scale_max=1, "
      "interpolation=%d), horizontal_flip";
  char text[256];
  std::snprintf(text, sizeof(text), kPipeline, 2);  // Antialias: exact, crop only.
  const Figures exact = ComparePipeline(text, photos, rounds, samples);
  std::snprintf(text, sizeof(text), kPipeline, 0);  // Bilinear: crop and DCT scaling.
  const Figures scaled = ComparePipeline(text, photos, rounds, samples);
  const Figures stage = CompareDecodeStage(photos, rounds, samples);
  std::printf(
      "RESULT name=decode-crop megapixels=%.2f fused_ips=%.1f unfused_ips=%.1f speedup=%.3f "
      "wall_speedup=%.3f fused_bilinear_ips=%.1f unfused_bilinear_ips=%.1f "
      "speedup_bilinear=%.3f wall_speedup_bilinear=%.3f decode_stage_fused_ips=%.1f "
      "decode_stage_unfused_ips=%.1f decode_stage_speedup=%.3f\n",
      megapixels, exact.fused_ips, exact.unfused_ips, exact.speedup, exact.wall_speedup,
      scaled.fused_ips, scaled.unfused_ips, scaled.speedup, scaled.wall_speedup, stage.fused_ips,
      stage.unfused_ips, stage.speedup);
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Main(argc, argv); }
