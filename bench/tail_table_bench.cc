// bench tail-table: the fused to_float/normalize tail alone (ConvertThroughTable and
// ConvertThroughTable16, augment/kernels/convert.h), 224x224x3 uint8, one thread, each build
// (convert_table_variants.h) in the same run:
//
//   float32 (CHW and HWC): the portable build (the scalar loop ConvertThroughTable ran before the
//     AVX-512 build; it ran with streaming stores in CHW, ordinary ones in HWC) and the AVX-512
//     VBMI one, each with streaming and with ordinary stores;
//   float16 (CHW): what the pipeline ran before (to_float and normalize one by one, then the
//     layout change and FloatToFloat16), the float32 table then FloatToFloat16, and the 16-bit
//     table's builds.
//
// The source is a batch of 64 random images (9.6 MB, as the client's received batch); the output
// is either the batch's 64 slots (38.5 MB, larger than the caches: the worker's and the client's
// case) or one slot rewritten each time (602 KB, cache-resident). Rounds alternate the builds
// (order rotated every round); each figure is the median round, in thread CPU time. The table
// holds normalize's values with ImageNet's mean and std; lookups take the same time whatever
// the values. Prints `RESULT name=tail-table ...`.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "augment/kernels/convert.h"
#include "augment/kernels/convert_table_variants.h"
#include "augment/kernels/half.h"
#include "augment/op.h"
#include "augment/pipeline.h"
#include "augment/pipeline_text.h"
#include "bench/bench_util.h"
#include "common/counter_rng.h"
#include "common/flags.h"
#include "image/image.h"

namespace stoker {
namespace {

using table_internal::TableStores;

constexpr ImageShape kImage{224, 224, 3, PixelType::kUint8};
constexpr uint32_t kBatch = 64;
constexpr char kTail[] = "to_float, normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])";

// One way to run the tail: image `in` to `out` (a slot of the case's entry size).
struct Build {
  std::string name;
  std::function<void(const ImageView& in, uint8_t* out)> run;
};

struct Case {
  std::string name;
  OutputLayout layout;
  bool batch_output;  // false: one cache-resident slot
  size_t entry_bytes;
  std::vector<Build> builds;
  size_t baseline;  // index of the build that ran before
};

Pipeline CompileTail(stoker::v1::DType dtype) {
  absl::StatusOr<stoker::v1::PipelineSpec> spec = ParsePipelineText(kTail);
  if (spec.ok()) {
    spec->set_output_layout(stoker::v1::LAYOUT_CHW);
    spec->set_output_dtype(dtype);
  }
  absl::StatusOr<Pipeline> pipeline =
      spec.ok() ? Pipeline::Compile(*spec, kImage) : absl::StatusOr<Pipeline>(spec.status());
  if (!pipeline.ok()) {
    std::fprintf(stderr, "tail_table_bench: %s\n",
                 std::string(pipeline.status().message()).c_str());
    std::exit(1);
  }
  return std::move(*pipeline);
}

// What the tail's ops give each value: the float32 pipeline run on every value in every channel.
std::vector<float> TailTable() {
  const Pipeline pipeline = CompileTail(stoker::v1::DTYPE_FLOAT32);
  std::vector<uint8_t> probe(kImage.elements());
  for (size_t i = 0; i < probe.size(); ++i) probe[i] = static_cast<uint8_t>(i / 3);
  std::vector<float> out(kImage.elements());
  PipelineWorkspace workspace;
  CounterRng unused(0);
  const ImageView in{probe.data(), kImage};
  if (!pipeline.Run(in, &unused, &workspace, reinterpret_cast<uint8_t*>(out.data())).ok()) {
    std::exit(1);
  }
  const size_t pixels = size_t{kImage.height} * kImage.width;
  std::vector<float> table(3 * kTableValues);
  for (size_t c = 0; c < 3; ++c) {
    for (size_t v = 0; v < kTableValues; ++v) table[c * kTableValues + v] = out[c * pixels + v];
  }
  return table;
}

std::vector<Build> FloatBuilds(const std::vector<float>& table, OutputLayout layout) {
  using Fn = void (*)(const ImageView&, const float*, OutputLayout, TableStores, float*);
  std::vector<std::pair<std::string, Fn>> variants = {
      {"portable", &table_internal::ConvertThroughTablePortable}};
  if (table_internal::CpuHasAvx512Vbmi()) {
    variants.push_back({"avx512", &table_internal::ConvertThroughTableAvx512});
  }
  std::vector<Build> builds;
  for (const auto& [name, fn] : variants) {
    for (TableStores stores : {TableStores::kStreaming, TableStores::kCached}) {
      builds.push_back({name + (stores == TableStores::kStreaming ? "_stream" : "_cached"),
                        [fn = fn, stores, layout, &table](const ImageView& in, uint8_t* out) {
                          fn(in, table.data(), layout, stores, reinterpret_cast<float*>(out));
                        }});
    }
  }
  return builds;
}

// Float16 CHW: the ops one by one then narrowed (before), the float32 table then narrowed, and
// the 16-bit table's builds (streaming, as ConvertThroughTable16 writes CHW).
std::vector<Build> HalfBuilds(const Pipeline& ops, const std::vector<float>& table,
                              const std::vector<uint16_t>& table16) {
  auto buffers = std::make_shared<std::vector<ImageBuffer>>(3);
  std::vector<Build> builds;
  builds.push_back(
      {"ops_then_narrow", [&ops, buffers](const ImageView& in, uint8_t* out) {
         ImageView current = in;
         CounterRng unused(0);
         for (size_t i = 0; i < ops.num_ops(); ++i) {
           (*buffers)[i].Reshape(ops.op(i).output_shape());
           if (!ops.op(i).Apply(current, &unused, &(*buffers)[2], (*buffers)[i].view()).ok()) {
             std::exit(1);
           }
           current = (*buffers)[i].view();
         }
         float* staging = (*buffers)[0].view().pixels<float>();
         ConvertImage(current, OutputLayout::kChw, PixelType::kFloat32, staging);
         FloatToFloat16(staging, kImage.elements(), out);
       }});
  const auto convert = table_internal::CpuHasAvx512Vbmi()
                           ? &table_internal::ConvertThroughTableAvx512
                           : &table_internal::ConvertThroughTablePortable;
  builds.push_back(
      {"f32_table_then_narrow", [&table, buffers, convert](const ImageView& in, uint8_t* out) {
         ImageBuffer& staging = (*buffers)[2];  // read again at once: cached stores
         staging.Reshape(ImageShape{kImage.height, kImage.width, 3, PixelType::kFloat32});
         float* floats = staging.view().pixels<float>();
         convert(in, table.data(), OutputLayout::kChw, TableStores::kCached, floats);
         FloatToFloat16(floats, kImage.elements(), out);
       }});
  using Fn = void (*)(const ImageView&, const uint16_t*, OutputLayout, TableStores, void*);
  std::vector<std::pair<std::string, Fn>> variants = {
      {"table16_portable", &table_internal::ConvertThroughTable16Portable}};
  if (table_internal::CpuHasAvx512Vbmi()) {
    variants.push_back({"table16_avx512", &table_internal::ConvertThroughTable16Avx512});
  }
  for (const auto& [name, fn] : variants) {
    builds.push_back({name, [fn = fn, &table16](const ImageView& in, uint8_t* out) {
                        fn(in, table16.data(), OutputLayout::kChw, TableStores::kStreaming, out);
                      }});
  }
  return builds;
}

// Runs every build of `c` for `rounds` rounds (order rotated), prints the medians, appends them
// to `result`.
void RunCase(const Case& c, const std::vector<uint8_t>& source, uint8_t* slots, uint32_t rounds,
             absl::Duration cpu_time, std::string* result) {
  const size_t slot_bytes = kImage.elements() * c.entry_bytes;
  std::vector<std::vector<double>> us(c.builds.size());
  for (uint32_t round = 0; round < rounds; ++round) {
    for (size_t k = 0; k < c.builds.size(); ++k) {
      const size_t b = (k + round) % c.builds.size();
      size_t i = 0;
      const auto item = [&] {
        const size_t slot = i++ % kBatch;
        const ImageView in{const_cast<uint8_t*>(source.data()) + slot * kImage.elements(), kImage};
        c.builds[b].run(in, slots + (c.batch_output ? slot * slot_bytes : 0));
      };
      us[b].push_back(1e6 / bench::ItemsPerSecond(item, cpu_time, bench::TimeBase::kThreadCpu));
    }
  }
  const double base = bench::Median(us[c.baseline]);
  for (size_t b = 0; b < c.builds.size(); ++b) {
    const double median = bench::Median(us[b]);
    const double gbps = kImage.elements() * (1.0 + c.entry_bytes) / (median * 1e3);
    std::printf("%-13s %-22s %7.1f us/image  %5.2f GB/s  %.2fx before\n", c.name.c_str(),
                c.builds[b].name.c_str(), median, gbps, base / median);
    *result += " " + c.name + "_" + c.builds[b].name + "_us=" + std::to_string(median);
  }
}

int Main(int argc, char** argv) {
  uint32_t rounds = 9;
  absl::Duration cpu_time = absl::Milliseconds(250);
  FlagSet flags("tail_table_bench", "The fused to_float/normalize tail alone, per build.");
  flags.Add("rounds", &rounds, "Rounds (build order rotated)");
  flags.Add("seconds", &cpu_time, absl::Seconds(1), "Thread CPU time per build per round");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;

  CounterRng rng(1);
  std::vector<uint8_t> source(kImage.elements() * kBatch);
  for (uint8_t& v : source) v = static_cast<uint8_t>(rng.UniformInt(256));
  const std::vector<float> table = TailTable();
  std::vector<uint16_t> table16(table.size());
  for (size_t i = 0; i < table.size(); ++i) table16[i] = Float16Bits(table[i]);
  const Pipeline ops = CompileTail(stoker::v1::DTYPE_FLOAT16);
  ImageBuffer output;  // 64-byte aligned: each slot is too (224 * 224 * 3 entries)
  output.Reshape(ImageShape{kImage.height * kBatch, kImage.width, 3, PixelType::kFloat32});
  uint8_t* slots = output.view().pixels<uint8_t>();

  std::printf("tail-table: load %s, clock %.2f GHz (measured), AVX-512 VBMI build: %s\n",
              bench::LoadAverage().c_str(), bench::MeasuredClockHz() / 1e9,
              table_internal::CpuHasAvx512Vbmi() ? "yes" : "no (portable only)");
  const OutputLayout chw = OutputLayout::kChw, hwc = OutputLayout::kHwc;
  // Baselines: the portable build as it ran before (streaming in CHW, ordinary stores in HWC).
  const Case cases[] = {{"chw_batch", chw, true, 4, FloatBuilds(table, chw), 0},
                        {"chw_hot", chw, false, 4, FloatBuilds(table, chw), 0},
                        {"hwc_batch", hwc, true, 4, FloatBuilds(table, hwc), 1},
                        {"hwc_hot", hwc, false, 4, FloatBuilds(table, hwc), 1},
                        {"chw_batch_f16", chw, true, 2, HalfBuilds(ops, table, table16), 0}};
  std::string result = "RESULT name=tail-table";
  for (const Case& c : cases) RunCase(c, source, slots, rounds, cpu_time, &result);
  std::printf("tail-table: load %s at the end\n", bench::LoadAverage().c_str());
  std::printf("%s\n", result.c_str());
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Main(argc, argv); }
