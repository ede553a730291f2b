// bench decode: Stoker's JPEG decode (the decode op's kernel: header gates, scan count,
// TurboJPEG into RGB) against tjbench, libjpeg-turbo's own benchmark, on the same 500x375 q90
// file. bench/decode.sh writes the file with --write, runs tjbench on it, then runs this with
// --jpeg and --tjbench_ips. One thread; prints `RESULT name=decode ...`.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "augment/kernels/decode.h"
#include "augment/synthetic_images.h"
#include "bench/bench_util.h"
#include "common/flags.h"

namespace stoker {
namespace {

constexpr uint32_t kHeight = 375, kWidth = 500;
constexpr int kQuality = 90;

int WriteJpeg(const std::string& path) {
  std::vector<uint8_t> pixels = NaturalImage(kHeight, kWidth, 3, 2026);
  const std::vector<uint8_t> jpeg =
      EncodeJpeg(ImageView{pixels.data(), {kHeight, kWidth, 3, PixelType::kUint8}}, kQuality);
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char*>(jpeg.data()), static_cast<std::streamsize>(jpeg.size()));
  if (jpeg.empty() || !file) {
    std::fprintf(stderr, "decode_bench: cannot write %s\n", path.c_str());
    return 1;
  }
  std::printf("wrote %s: %ux%u q%d, %zu bytes\n", path.c_str(), kWidth, kHeight, kQuality,
              jpeg.size());
  return 0;
}

int Main(int argc, char** argv) {
  std::string write_path, jpeg_path;
  double tjbench_ips = 0;
  absl::Duration round_length = absl::Seconds(3);
  uint32_t rounds = 3;
  FlagSet flags("decode_bench", "JPEG decode: Stoker vs tjbench on the same file.");
  flags.Add("write", &write_path, "Write the benchmark JPEG to this path and exit");
  flags.Add("jpeg", &jpeg_path, "The JPEG to decode");
  flags.Add("tjbench_ips", &tjbench_ips, "tjbench's decompressions per second on --jpeg");
  flags.Add("seconds", &round_length, absl::Seconds(1), "Length of a round");
  flags.Add("rounds", &rounds, "Rounds; the best counts");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (!write_path.empty()) return WriteJpeg(write_path);

  std::ifstream file(jpeg_path, std::ios::binary);
  const std::vector<uint8_t> jpeg((std::istreambuf_iterator<char>(file)),
                                  std::istreambuf_iterator<char>());
  ImageDecoder decoder;
  const DecodeLimits limits{50'000'000, 100};
  std::vector<uint8_t> pixels(size_t{kHeight} * kWidth * 3);
  const ImageView out{pixels.data(), {kHeight, kWidth, 3, PixelType::kUint8}};
  bool ok = true;
  double stoker_ips = 0;
  for (uint32_t round = 0; round < rounds; ++round) {
    const double ips = bench::ItemsPerSecond(
        [&] {
          absl::StatusOr<EncodedHeader> header = decoder.ReadHeader(jpeg, limits);
          ok = ok && header.ok() && header->height == kHeight && decoder.Decode(jpeg, out).ok();
        },
        round_length);
    std::printf("round %u: stoker %.0f decodes/s\n", round + 1, ips);
    stoker_ips = std::max(stoker_ips, ips);
  }
  if (!ok) {
    std::fprintf(stderr, "decode_bench: decoding %s failed\n", jpeg_path.c_str());
    return 1;
  }
  std::printf("RESULT name=decode stoker_ips=%.1f tjbench_ips=%.1f vs_tjbench=%.3f\n", stoker_ips,
              tjbench_ips, tjbench_ips > 0 ? stoker_ips / tjbench_ips : 0.0);
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Main(argc, argv); }
