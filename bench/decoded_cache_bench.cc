// Stoker's side of `scripts/bench.sh decoded-cache` (docs/benchmarks/decoded-cache.md): a
// worker's CPU per image with the decoded cache (worker/decoded_cache.h) against without, one
// producer thread running ProduceBatch as a worker's does, on packed JPEG shards:
//   (a) one job, several epochs over the first --images samples (they fit the cache): CPU and
//       minor page faults per image in each epoch, cache off (JobSpec.decoded_cache OFF, no
//       cache: what a job runs today) and on (ALWAYS, a fresh cache), alternating by round;
//   (b) --jobs jobs on the same data and prefix, their own seeds, started together (batches
//       interleaved), one epoch: off vs on.
// Pipeline: decode, resize(256x256) (the prefix), random_resized_crop(224), horizontal_flip
// (the suffix), uint8 HWC (the tail on the client). Medians over --rounds, then
// `RESULT name=decoded-cache ...` with the two ratios.

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "augment/pipeline_text.h"
#include "common/clock.h"
#include "common/flags.h"
#include "worker/batch_producer.h"
#include "worker/decoded_cache.h"

namespace stoker {
namespace {

constexpr char kDecodedBenchPipeline[] =
    "decode, resize(height=256, width=256), random_resized_crop(height=224, width=224), "
    "horizontal_flip";

struct DecodedBenchConfig {
  std::string manifest;
  uint32_t images = 640;  // per epoch: the first ones (no shuffle), so every epoch reads them
  uint32_t epochs = 3;
  uint32_t jobs = 4;
  uint32_t rounds = 3;
  uint32_t batch_size = 64;
};

// CPU seconds and minor faults of the calling thread.
struct ThreadCost {
  double cpu = 0;
  double faults = 0;
  static ThreadCost Now() {
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    return {absl::ToDoubleSeconds(ThreadCpuTime()), static_cast<double>(usage.ru_minflt)};
  }
};

absl::StatusOr<std::shared_ptr<JobContext>> DecodedBenchJob(const DecodedBenchConfig& config,
                                                            uint64_t job_id, bool cache_on) {
  v1::JobSpec spec;
  spec.mutable_dataset()->mutable_shards()->set_manifest(config.manifest);
  absl::StatusOr<v1::PipelineSpec> pipeline = ParsePipelineText(kDecodedBenchPipeline);
  if (!pipeline.ok()) return pipeline.status();
  *spec.mutable_pipeline() = *pipeline;
  spec.mutable_pipeline()->set_output_layout(v1::LAYOUT_HWC);
  spec.set_batch_size(config.batch_size);
  spec.set_seed(job_id);
  spec.set_shuffle(v1::SHUFFLE_MODE_NONE);
  spec.set_world_size(1);
  spec.set_epochs(config.epochs);
  spec.set_decoded_cache(cache_on ? v1::DECODED_CACHE_ALWAYS : v1::DECODED_CACHE_OFF);
  return JobContext::Create(job_id, spec, DatasetIo::FromEnvironment());
}

// Produces the first config.images / batch_size batches of `epoch` of each job, batch by batch
// across the jobs; the cost per image produced.
absl::StatusOr<ThreadCost> DecodedBenchEpoch(const DecodedBenchConfig& config,
                                             const std::vector<std::shared_ptr<JobContext>>& jobs,
                                             uint32_t epoch, DecodedCache* cache,
                                             ProducerScratch* scratch) {
  const uint32_t batches = config.images / config.batch_size;
  v1::BatchMessage batch;
  const ThreadCost start = ThreadCost::Now();
  for (uint32_t b = 0; b < batches; ++b) {
    for (const std::shared_ptr<JobContext>& job : jobs) {
      v1::TaskId task;
      task.set_epoch(epoch);
      task.set_batch_index(b);
      absl::Status status = ProduceBatch(*job, task, 0, scratch, &batch, nullptr, cache);
      if (!status.ok()) return status;
    }
  }
  const ThreadCost end = ThreadCost::Now();
  const double images = static_cast<double>(batches) * config.batch_size * jobs.size();
  return ThreadCost{(end.cpu - start.cpu) / images, (end.faults - start.faults) / images};
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// One round of (a) or (b): per epoch, the cost per image with the cache `on` or off.
absl::StatusOr<std::vector<ThreadCost>> DecodedBenchRound(const DecodedBenchConfig& config,
                                                          uint32_t jobs, uint32_t epochs, bool on) {
  std::vector<std::shared_ptr<JobContext>> contexts;
  for (uint32_t j = 0; j < jobs; ++j) {
    absl::StatusOr<std::shared_ptr<JobContext>> job = DecodedBenchJob(config, j + 1, on);
    if (!job.ok()) return job.status();
    contexts.push_back(*job);
  }
  std::unique_ptr<DecodedCache> cache;
  if (on) cache = std::make_unique<DecodedCache>(uint64_t{4} << 30, DecodedCacheCompression::kNone);
  ProducerScratch scratch;
  std::vector<ThreadCost> costs;
  for (uint32_t epoch = 0; epoch < epochs; ++epoch) {
    absl::StatusOr<ThreadCost> cost =
        DecodedBenchEpoch(config, contexts, epoch, cache.get(), &scratch);
    if (!cost.ok()) return cost.status();
    costs.push_back(*cost);
  }
  return costs;
}

int Run(int argc, char** argv) {
  DecodedBenchConfig config;
  FlagSet flags("decoded_cache_bench", "CPU per image with the decoded cache vs without.");
  flags.Add("manifest", &config.manifest, "manifest written by stoker-pack");
  flags.Add("images", &config.images, "samples per epoch (the first ones)");
  flags.Add("epochs", &config.epochs, "epochs of the one-job measurement, >= 2");
  flags.Add("jobs", &config.jobs, "jobs started together in the shared measurement");
  flags.Add("rounds", &config.rounds, "alternating rounds; medians are reported");
  flags.Add("batch-size", &config.batch_size, "samples per batch");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (config.manifest.empty()) {
    return flags.Fail(absl::InvalidArgumentError("--manifest: required"));
  }
  if (config.epochs < 2) return flags.Fail(absl::InvalidArgumentError("--epochs: must be >= 2"));
  // [mode][epoch] CPU and faults per image over the rounds; mode 0 off, 1 on.
  std::vector<std::vector<std::vector<double>>> cpu(2), faults(2);
  std::vector<std::vector<double>> shared_cpu(2), shared_faults(2);
  for (uint32_t round = 0; round < config.rounds; ++round) {
    for (int on = 0; on < 2; ++on) {
      absl::StatusOr<std::vector<ThreadCost>> one =
          DecodedBenchRound(config, 1, config.epochs, on == 1);
      absl::StatusOr<std::vector<ThreadCost>> many =
          one.ok() ? DecodedBenchRound(config, config.jobs, 1, on == 1) : one;
      if (!many.ok()) {
        std::fprintf(stderr, "decoded_cache_bench: %s\n", many.status().ToString().c_str());
        return 1;
      }
      cpu[on].resize(config.epochs);
      faults[on].resize(config.epochs);
      for (uint32_t e = 0; e < config.epochs; ++e) {
        cpu[on][e].push_back((*one)[e].cpu);
        faults[on][e].push_back((*one)[e].faults);
      }
      shared_cpu[on].push_back((*many)[0].cpu);
      shared_faults[on].push_back((*many)[0].faults);
      std::printf("round %u cache %s: one job epochs", round, on ? "on " : "off");
      for (const ThreadCost& cost : *one) std::printf(" %.3f ms", cost.cpu * 1e3);
      std::printf("; %u jobs %.3f ms per image\n", config.jobs, (*many)[0].cpu * 1e3);
    }
  }
  std::printf("%-24s %12s %12s %12s %12s\n", "median per image", "off ms", "off faults", "on ms",
              "on faults");
  for (uint32_t e = 0; e < config.epochs; ++e) {
    std::printf("%-24s %12.3f %12.2f %12.3f %12.2f\n",
                absl::StrCat("one job, epoch ", e + 1).c_str(), Median(cpu[0][e]) * 1e3,
                Median(faults[0][e]), Median(cpu[1][e]) * 1e3, Median(faults[1][e]));
  }
  std::printf("%-24s %12.3f %12.2f %12.3f %12.2f\n",
              absl::StrCat(config.jobs, " jobs together").c_str(), Median(shared_cpu[0]) * 1e3,
              Median(shared_faults[0]), Median(shared_cpu[1]) * 1e3, Median(shared_faults[1]));
  // (a): epochs >= 2 with the cache against the same epochs without it (and against its epoch 1).
  std::vector<double> later_on, later_off;
  for (uint32_t e = 1; e < config.epochs; ++e) {
    later_on.push_back(Median(cpu[1][e]));
    later_off.push_back(Median(cpu[0][e]));
  }
  const double later_on_ms = Median(later_on) * 1e3, later_off_ms = Median(later_off) * 1e3;
  std::printf(
      "RESULT name=decoded-cache images=%u epochs=%u jobs=%u off_ms=%.3f on_epoch1_ms=%.3f "
      "on_later_ms=%.3f later_vs_off=%.2f later_vs_epoch1=%.2f shared_off_ms=%.3f "
      "shared_on_ms=%.3f shared_vs_off=%.2f\n",
      config.images, config.epochs, config.jobs, later_off_ms, Median(cpu[1][0]) * 1e3, later_on_ms,
      later_on_ms / later_off_ms, later_on_ms / (Median(cpu[1][0]) * 1e3),
      Median(shared_cpu[0]) * 1e3, Median(shared_cpu[1]) * 1e3,
      Median(shared_cpu[1]) / Median(shared_cpu[0]));
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Run(argc, argv); }
