// bench tail-table: the fused to_float/normalize tail alone (ConvertThroughTable,
// augment/kernels/convert.h), 224x224x3 uint8 -> float32, one thread, each build
// (convert_table_variants.h) in the same run, each with streaming and with ordinary stores: the
// portable one (the scalar loop ConvertThroughTable ran before the AVX-512 build; it ran with
// streaming stores in CHW, cached ones in HWC) and the AVX-512 VBMI one.
//
// The source is a batch of 64 random images (9.6 MB, as the client's received batch); the output
// is either the batch's 64 slots (38.5 MB, larger than the caches: the worker's and the client's
// case) or one slot rewritten each time (602 KB, cache-resident). Rounds alternate the builds
// (order rotated every round); each figure is the median round, in thread CPU time. The table
// holds normalize's values with ImageNet's mean and std; lookups take the same time whatever
// the values. Prints `RESULT name=tail-table ...`.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "augment/kernels/convert.h"
#include "augment/kernels/convert_table_variants.h"
#include "bench/bench_util.h"
#include "common/counter_rng.h"
#include "common/flags.h"
#include "image/image.h"

namespace stoker {
namespace {

using Convert = void (*)(const ImageView&, const float*, OutputLayout, TableStores, float*);

constexpr ImageShape kImage{224, 224, 3, PixelType::kUint8};
constexpr uint32_t kBatch = 64;

struct Build {
  const char* name;
  Convert convert;
  TableStores stores;
};

std::vector<float> NormalizeTable() {
  const float mean[3] = {0.485f, 0.456f, 0.406f}, std_dev[3] = {0.229f, 0.224f, 0.225f};
  std::vector<float> table(3 * kTableValues);
  for (size_t c = 0; c < 3; ++c) {
    for (size_t v = 0; v < kTableValues; ++v) {
      table[c * kTableValues + v] = (static_cast<float>(v) / 255.0f - mean[c]) / std_dev[c];
    }
  }
  return table;
}

struct Case {
  OutputLayout layout;
  bool batch_output;  // false: one cache-resident slot
  std::string name;
};

int Main(int argc, char** argv) {
  uint32_t rounds = 9;
  double seconds = 0.25;
  FlagSet flags("tail_table_bench", "The fused to_float/normalize tail alone, per build.");
  flags.Add("rounds", &rounds, "Rounds (build order rotated)");
  flags.Add("seconds", &seconds, "Thread CPU seconds per build per round");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;

  const Convert portable = &table_internal::ConvertThroughTablePortable;
  std::vector<Build> builds = {{"portable_stream", portable, TableStores::kStreaming},
                               {"portable_cached", portable, TableStores::kCached}};
  if (table_internal::CpuHasAvx512Vbmi()) {
    const Convert avx512 = &table_internal::ConvertThroughTableAvx512;
    builds.push_back({"avx512_stream", avx512, TableStores::kStreaming});
    builds.push_back({"avx512_cached", avx512, TableStores::kCached});
  }
  CounterRng rng(1);
  std::vector<uint8_t> source(kImage.elements() * kBatch);
  for (uint8_t& v : source) v = static_cast<uint8_t>(rng.UniformInt(256));
  const std::vector<float> table = NormalizeTable();
  ImageBuffer output;  // 64-byte aligned: each slot is too (224 * 224 * 3 floats)
  output.Reshape(ImageShape{kImage.height * kBatch, kImage.width, 3, PixelType::kFloat32});
  float* slots = output.view().pixels<float>();

  std::printf("tail-table: load %s, clock %.2f GHz (measured), AVX-512 VBMI build: %s\n",
              bench::LoadAverage().c_str(), bench::MeasuredClockHz() / 1e9,
              table_internal::CpuHasAvx512Vbmi() ? "yes" : "no (portable only)");
  const Case cases[] = {{OutputLayout::kChw, true, "chw_batch"},
                        {OutputLayout::kChw, false, "chw_hot"},
                        {OutputLayout::kHwc, true, "hwc_batch"},
                        {OutputLayout::kHwc, false, "hwc_hot"}};
  std::string result = "RESULT name=tail-table";
  for (const Case& c : cases) {
    std::vector<std::vector<double>> us(builds.size());
    for (uint32_t round = 0; round < rounds; ++round) {
      for (size_t k = 0; k < builds.size(); ++k) {
        const size_t b = (k + round) % builds.size();
        size_t i = 0;
        const auto item = [&] {
          const size_t slot = i++ % kBatch;
          const ImageView in{source.data() + slot * kImage.elements(), kImage};
          float* out = slots + (c.batch_output ? slot * kImage.elements() : 0);
          builds[b].convert(in, table.data(), c.layout, builds[b].stores, out);
        };
        us[b].push_back(1e6 / bench::ItemsPerSecond(item, seconds, bench::TimeBase::kThreadCpu));
      }
    }
    // The baseline: the portable build as it ran before (streaming in CHW only).
    const double base = bench::Median(us[c.layout == OutputLayout::kChw ? 0 : 1]);
    for (size_t b = 0; b < builds.size(); ++b) {
      const double median = bench::Median(us[b]);
      const double gbps = kImage.elements() * 5.0 / (median * 1e3);  // bytes read + written
      std::printf("%-10s %-14s %7.1f us/image  %5.2f GB/s  %.2fx old\n", c.name.c_str(),
                  builds[b].name, median, gbps, base / median);
      result += " " + c.name + "_" + builds[b].name + "_us=" + std::to_string(median);
    }
  }
  std::printf("tail-table: load %s at the end\n", bench::LoadAverage().c_str());
  std::printf("%s\n", result.c_str());
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Main(argc, argv); }
