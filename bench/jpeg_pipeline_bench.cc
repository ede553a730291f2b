// Stoker's side of `scripts/bench.sh jpeg-pipeline`: a worker's batch production on packed JPEG
// shards (shard read + CRC check + decode + random_resized_crop(224) + horizontal_flip +
// to_float + normalize, into float32 CHW batches of 64), on --threads threads (one per core),
// each running ProduceBatch exactly as a worker's producer thread does.
//
//   jpeg_pipeline_bench --manifest=.cache/jpeg/shards/manifest.json --torchvision-ips=123
//
// Prints the figures, then `RESULT name=jpeg-pipeline ...` with images/s per core of both sides
// and the ratio vs_torchvision (torchvision's figure comes from bench/jpeg_torchvision.py).

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "augment/pipeline_text.h"
#include "common/clock.h"
#include "common/flags.h"
#include "worker/batch_producer.h"

namespace stoker {
namespace {

constexpr char kPipeline[] =
    "decode, random_resized_crop(height=224, width=224), horizontal_flip, to_float, "
    "normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])";

struct BenchConfig {
  std::string manifest;
  absl::Duration length = absl::Seconds(20);
  uint32_t threads = 0;  // 0: one per core.
  uint32_t batch_size = 64;
  double torchvision_ips = 0;  // Total images/s of torchvision's DataLoader (all workers).
};

// Produces batches of epochs 0, 1, ... on `threads` threads for `length`; returns images/s.
absl::StatusOr<double> Measure(const BenchConfig& config, uint32_t threads) {
  stoker::v1::JobSpec spec;
  spec.mutable_dataset()->mutable_shards()->set_manifest(config.manifest);
  absl::StatusOr<stoker::v1::PipelineSpec> pipeline = ParsePipelineText(kPipeline);
  if (!pipeline.ok()) return pipeline.status();
  *spec.mutable_pipeline() = *pipeline;
  spec.mutable_pipeline()->set_output_layout(stoker::v1::LAYOUT_CHW);
  spec.set_batch_size(config.batch_size);
  spec.set_seed(1);
  spec.set_world_size(1);
  spec.set_epochs(1000);
  spec.set_drop_last(true);
  absl::StatusOr<std::shared_ptr<JobContext>> job =
      JobContext::Create(1, spec, DatasetIo::FromEnvironment());
  if (!job.ok()) return job.status();
  absl::StatusOr<std::shared_ptr<const EpochPlan>> plan = (*job)->Plan(0);
  if (!plan.ok()) return plan.status();
  const uint64_t batches_per_epoch = (*plan)->global_batches();

  std::atomic<uint64_t> next_task{0};
  std::atomic<uint64_t> images{0};
  std::atomic<bool> stop{false};
  absl::Status first_error;
  std::atomic<bool> failed{false};
  auto loop = [&] {
    ProducerScratch scratch;
    stoker::v1::BatchMessage batch;
    while (!stop) {
      const uint64_t n = next_task++;
      stoker::v1::TaskId task;
      task.set_job_id(1);
      task.set_epoch(static_cast<uint32_t>(n / batches_per_epoch));
      task.set_batch_index(n % batches_per_epoch);
      absl::Status status = ProduceBatch(**job, task, 0, &scratch, &batch);
      if (!status.ok()) {
        if (!failed.exchange(true)) first_error = status;
        return;
      }
      images += config.batch_size;
    }
  };
  // The first tenth of the time warms up (page faults, shard indexes, decoder state).
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t) pool.emplace_back(loop);
  Clock* const clock = Clock::Real();
  clock->SleepFor(config.length * 0.1);
  const uint64_t warm_images = images;
  const absl::Time warm = clock->Now();
  clock->SleepFor(config.length * 0.9);
  const uint64_t done = images;
  const absl::Time end = clock->Now();
  stop = true;
  for (std::thread& thread : pool) thread.join();
  if (failed) return first_error;
  return (done - warm_images) / absl::ToDoubleSeconds(end - warm);
}

int Run(int argc, char** argv) {
  BenchConfig config;
  FlagSet flags("jpeg_pipeline_bench", "JPEG workload on packed shards: Stoker vs torchvision.");
  flags.Add("manifest", &config.manifest, "manifest written by stoker-pack");
  flags.Add("seconds", &config.length, absl::Seconds(1), "length of the measurement");
  flags.Add("threads", &config.threads, "producer threads (0 = one per core)");
  flags.Add("batch-size", &config.batch_size, "samples per batch");
  flags.Add("torchvision-ips", &config.torchvision_ips,
            "torchvision DataLoader images/s over all its workers (0 = not measured)");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (config.manifest.empty())
    return flags.Fail(absl::InvalidArgumentError("--manifest: required"));
  const uint32_t cores =
      config.threads > 0 ? config.threads : std::max(1u, std::thread::hardware_concurrency());
  absl::StatusOr<double> ips = Measure(config, cores);
  if (!ips.ok()) {
    std::fprintf(stderr, "jpeg_pipeline_bench: %s\n", ips.status().ToString().c_str());
    return 1;
  }
  const double per_core = *ips / cores;
  const double tv_per_core = config.torchvision_ips / cores;
  std::printf("stoker: %.0f images/s on %u threads (%.0f per core)\n", *ips, cores, per_core);
  std::printf("torchvision: %.0f images/s with %u DataLoader workers (%.0f per core)\n",
              config.torchvision_ips, cores, tv_per_core);
  std::printf(
      "RESULT name=jpeg-pipeline cores=%u stoker_ips_per_core=%.1f torchvision_ips_per_core=%.1f "
      "vs_torchvision=%.2f\n",
      cores, per_core, tv_per_core, tv_per_core > 0 ? per_core / tv_per_core : 0.0);
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Run(argc, argv); }
