// stoker-bench-client: streams a job's batches like a trainer would and reports throughput.
//
//   stoker-bench-client --coordinator=127.0.0.1:7070 --epochs=1 --step-ms=5
//
// Checkpoints like a trainer: with --token-file=F, after every batch it writes F (durably:
// common/atomic_file.h) as two lines, the number of batches this run has returned and the
// base64 of Loader::ResumeToken(); --resume-from=F1,F2,... resumes from such files (with another
// --world-size, the files of every old rank, and a new --job). The first line tells which
// --dump-indices lines the token covers (the first that many).
//
// Defaults are the blur reference workload (docs/architecture.md): synthetic 224×224×3 images,
// batch 64, 1000 classes, pipeline "to_float, gaussian_blur(ksize=11)*10". Exit codes: 0 done, 1
// runtime error (e.g. coordinator unreachable; the status is printed), 2 bad flags.

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/address_list.h"
#include "common/atomic_file.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/heap_tuning.h"
#include "common/logging.h"
#include "common/metrics.h"
#include "common/mutex_tuning.h"
#include "common/status_macros.h"
#include "common/tls/tls_config.h"
#include "coordinator/coordinator_client.h"
#include "jobspec/job_spec_args.h"
#include "tools/bench_report.h"
#include "trainer_client/client_tail.h"
#include "trainer_client/loader.h"
#include "trainer_client/loader_env.h"

namespace stoker {
namespace {

constexpr char kProgram[] = "stoker-bench-client";

// The job's flags are JobSpecArgs' (jobspec/job_spec_args.h), with the blur reference
// workload as defaults.
struct BenchConfig : JobSpecArgs {
  BenchConfig() {
    num_samples = 6400;
    pipeline = "to_float, gaussian_blur(ksize=11)*10";
    layout = "hwc";
  }
  std::string coordinator = "127.0.0.1:7070";
  std::string job;
  uint32_t rank = 0;
  absl::Duration step;
  uint64_t max_batches = 0;
  uint64_t warmup_batches = 2;
  uint64_t prefetch_mb = 256;
  std::string workers;
  std::string dump_indices;
  std::string report_json;
  bool ordered = false;
  bool contiguous = false;
  std::string compression = "none";
  // Process-wide tunings the library leaves off by default (LoaderOptions); this process is
  // the bench's own, so they are on unless a flag turns them off.
  bool retain_heap_memory = true;
  bool one_heap_arena = true;
  bool tune_read_wakeups = true;
  std::string token_file;
  std::string resume_from;
  MetricsFlags metrics;
  LogFlags log;
  TlsFlags tls;  // A trainer certificate (or --insecure).

  // INVALID_ARGUMENT naming the flag.
  absl::Status Validate() const;
  // Validates, then builds the loader's options (a random job name when --job is empty).
  absl::StatusOr<LoaderOptions> ToLoaderOptions() const;
};

// The token saved in a --token-file (its second line, base64).
absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  std::string count, encoded, token;
  if (!in || !std::getline(in, count) || !std::getline(in, encoded)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--resume-from: cannot read a token file from ", path));
  }
  if (!absl::Base64Unescape(encoded, &token) || token.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--resume-from: ", path, " holds no token"));
  }
  return token;
}

// Writes `batches` and the loader's token to `path`, durably: a checkpoint that a power loss
// could take back to an older token would deliver the batches since then twice.
absl::Status WriteTokenFile(const std::string& path, uint64_t batches, const std::string& token) {
  return PrefixStatus(
      "--token-file: ",
      ReplaceFile(path, absl::StrCat(batches, "\n", absl::Base64Escape(token), "\n"),
                  Durability::kDurable));
}

absl::Status Positive(const char* flag, uint64_t value) {
  if (value > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": must be > 0"));
}

absl::Status BenchConfig::Validate() const {
  RETURN_IF_ERROR(ParseAddressList("--coordinator", coordinator).status());
  if (rank >= world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rank: must be < --world-size (", world_size, "), got ", rank));
  }
  if (world_size > 1 && job.empty()) {
    return absl::InvalidArgumentError(
        "--job: required when --world-size > 1 (every rank must open the same job)");
  }
  RETURN_IF_ERROR(Positive("prefetch-mb", prefetch_mb));
  return absl::OkStatus();
}

absl::StatusOr<LoaderOptions> BenchConfig::ToLoaderOptions() const {
  RETURN_IF_ERROR(Validate());
  LoaderOptions options;
  options.coordinator_address = coordinator;
  options.job_name = job;
  if (options.job_name.empty()) {
    absl::BitGen gen;
    options.job_name = absl::StrCat("bench-", absl::Hex(absl::Uniform<uint32_t>(gen)));
  }
  options.rank = rank;
  options.prefetch_bytes = prefetch_mb << 20;
  options.ordered = ordered;
  options.compression = compression;
  options.retain_heap_memory = retain_heap_memory;
  options.tune_read_wakeups = tune_read_wakeups;
  ASSIGN_OR_RETURN(options.tls, tls.Build());
  for (absl::string_view file : absl::StrSplit(resume_from, ',', absl::SkipWhitespace())) {
    ASSIGN_OR_RETURN(std::string token, ReadTokenFile(std::string(file)));
    options.resume_tokens.push_back(std::move(token));
  }
  for (absl::string_view address : absl::StrSplit(workers, ',', absl::SkipWhitespace())) {
    options.only_workers.emplace_back(address);
  }
  // Flags are the fields' names with dashes: batch_size → --batch-size.
  ASSIGN_OR_RETURN(options.spec, ToJobSpec([](absl::string_view field) {
                     return absl::StrCat("--", absl::StrReplaceAll(field, {{"_", "-"}}));
                   }));
  RETURN_IF_ERROR(options.Validate());
  return options;
}

void AddFlags(FlagSet& flags, BenchConfig& c) {
  flags.Add("coordinator", &c.coordinator, kCoordinatorFlagHelp);
  c.tls.AddTo(&flags, /*calls=*/true, /*serves=*/false);
  flags.Add("job", &c.job, "job name (every rank uses the same); empty = a random bench-* name");
  flags.Add("manifest", &c.manifest,
            "shards manifest (stoker-pack) to read instead of synthetic images");
  flags.Add("num-samples", &c.num_samples, "synthetic dataset size");
  flags.Add("height", &c.height, "image height");
  flags.Add("width", &c.width, "image width");
  flags.Add("channels", &c.channels, "channels per pixel (1 or 3)");
  flags.Add("num-classes", &c.num_classes, "labels cycle through 0..num-classes-1");
  flags.Add("batch-size", &c.batch_size, "samples per batch");
  flags.Add("epochs", &c.epochs, "epochs to run");
  flags.Add("seed", &c.seed, "seed of the epoch plan and the per-sample randomness");
  flags.Add("shuffle", &c.shuffle, "none | global | block | shard_window");
  flags.Add("shuffle-block", &c.shuffle_block, "block length for --shuffle=block");
  flags.Add("sweep-seed", &c.sweep_seed,
            "the seed a sweep's jobs share: the same blocks or shard windows in step (0: off)");
  flags.Add("shuffle-window-shards", &c.shuffle_window_shards,
            "shards per window for --shuffle=shard_window");
  flags.Add("world-size", &c.world_size, "number of trainer ranks");
  flags.Add("rank", &c.rank, "this client's rank");
  flags.Add("drop-last", &c.drop_last, "drop the tail instead of wrapping around");
  flags.Add("pipeline", &c.pipeline, "augmentation, e.g. 'to_float, gaussian_blur(ksize=11)*10'");
  flags.Add("field", &c.fields,
            "a sample field the job wants (JobSpec.fields), once per field: --field image "
            "--field boxes --field box_labels; none: images and labels");
  flags.Add("layout", &c.layout, "hwc | chw");
  flags.Add("dtype", &c.dtype, "auto | uint8 | float32 | float16 | bfloat16");
  flags.Add("tail", &c.tail,
            "auto | worker | client: where the to_float/normalize tail runs (JobSpec.tail)");
  flags.Add("decoded-cache", &c.decoded_cache,
            "auto | on | off | always: whether workers keep decoded samples for the next epoch "
            "and other jobs (JobSpec.decoded_cache; unset: auto, each worker choosing from "
            "measured costs)");
  flags.Add("step-ms", &c.step, absl::Milliseconds(1),
            "simulated training step: sleep this long per batch");
  flags.Add("max-batches", &c.max_batches, "stop after this many batches (0 = all epochs)");
  flags.Add("prefetch-mb", &c.prefetch_mb, "client prefetch budget in MiB");
  flags.Add("workers", &c.workers, "comma-separated worker addresses to use (empty = all)");
  flags.Add("dump-indices", &c.dump_indices, "write one JSON line per batch to this file");
  flags.Add("report-json", &c.report_json, "write the report as JSON to this file");
  flags.Add("warmup-batches", &c.warmup_batches,
            "the report's steady_* figures (images, process CPU seconds) count from the end of "
            "this batch (start-up and the first connections excluded)");
  flags.Add("ordered", &c.ordered, "yield batches in plan order (bounded reorder buffer)");
  flags.Add("contiguous", &c.contiguous,
            "ask each batch for its tensor at one address (Batch::data(): gathers the received "
            "pieces once, as a consumer that wraps it in a CPU tensor does)");
  flags.Add("compression", &c.compression,
            "payload compression of the worker streams: none, lz4, zstd, zstd:LEVEL or auto");
  flags.Add("retain-heap-memory", &c.retain_heap_memory,
            "keep freed heap memory in the process (LoaderOptions::retain_heap_memory)");
  flags.Add("one-heap-arena", &c.one_heap_arena,
            "allocate from one glibc arena in every thread (common/heap_tuning.h)");
  flags.Add("tune-read-wakeups", &c.tune_read_wakeups,
            "gRPC's read-wakeup experiments for this process (LoaderOptions::tune_read_wakeups)");
  flags.Add("token-file", &c.token_file,
            "after each batch, write the batch count and the resume token here (atomically)");
  flags.Add("resume-from", &c.resume_from,
            "comma-separated token files (--token-file) to resume from");
  c.metrics.AddTo(&flags);
  c.log.AddTo(&flags);
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n", kProgram, status.ToString().c_str());
  return 1;
}

// Consumes batches until the job ends or --max-batches, stepping on `clock`; fills `run`.
absl::Status Consume(Loader& loader, const BenchConfig& config, std::ofstream* dump, Clock* clock,
                     BenchRun* run) {
  const absl::Time start = clock->Now();
  absl::Duration steady_cpu_start = ProcessCpuTime();
  absl::Status status;
  while (config.max_batches == 0 || run->batches < config.max_batches) {
    absl::StatusOr<Batch> batch = loader.Next();
    if (!batch.ok()) {
      if (batch.status().code() != absl::StatusCode::kOutOfRange) status = batch.status();
      break;
    }
    // Flushed per line: chaos tests read it while the client runs, and after killing it.
    if (dump != nullptr) *dump << FormatIndicesLine(*batch, config.rank) << "\n" << std::flush;
    if (config.contiguous) batch->data();  // the one copy a CPU tensor's consumer pays
    if (config.step > absl::ZeroDuration()) clock->SleepFor(config.step);
    ++run->batches;
    // The "checkpoint" after the step that used the batch.
    if (!config.token_file.empty()) {
      status = WriteTokenFile(config.token_file, run->batches, loader.ResumeToken());
      if (!status.ok()) break;
    }
    run->images += batch->num_samples();
    if (run->batches > config.warmup_batches) {
      run->steady_images += batch->num_samples();
    } else if (run->batches == config.warmup_batches) {
      steady_cpu_start = ProcessCpuTime();
    }
  }
  run->wall_seconds = absl::ToDoubleSeconds(clock->Now() - start);
  if (run->steady_images > 0) {
    run->steady_cpu_seconds = absl::ToDoubleSeconds(ProcessCpuTime() - steady_cpu_start);
  }
  if (dump != nullptr && !dump->flush()) {
    return absl::UnavailableError(
        absl::StrCat("--dump-indices: cannot write ", config.dump_indices));
  }
  return status;
}

int Run(int argc, char** argv) {
  BenchConfig config;
  FlagSet flags(kProgram, "Streams a job's batches like a trainer and reports throughput.");
  AddFlags(flags, config);
  if (std::optional<int> exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (absl::Status status = config.log.Apply(); !status.ok()) return flags.Fail(status);
  // Before the loader starts gRPC's threads, so that none has an arena of its own.
  if (config.one_heap_arena) UseOneHeapArena();
  SkipMutexDeadlockDetection();
  absl::StatusOr<LoaderOptions> options = config.ToLoaderOptions();
  if (!options.ok()) return flags.Fail(options.status());

  std::unique_ptr<std::ofstream> dump;
  if (!config.dump_indices.empty()) {
    dump = std::make_unique<std::ofstream>(config.dump_indices, std::ios::trunc);
    if (!*dump) {
      return Fail(absl::UnavailableError(
          absl::StrCat("--dump-indices: cannot open ", config.dump_indices)));
    }
  }
  LoaderEnv env;
  env.tail = ClientTailFactory();
  absl::StatusOr<std::unique_ptr<Loader>> loader = Loader::Open(*options, std::move(env));
  if (!loader.ok()) return Fail(loader.status());
  absl::StatusOr<std::unique_ptr<MetricsServer>> metrics =
      config.metrics.Serve((*loader)->metrics());
  if (!metrics.ok()) return Fail(metrics.status());

  BenchRun run;
  run.job_name = options->job_name;
  run.job_id = (*loader)->job_id();
  run.rank = config.rank;
  run.world_size = config.world_size;
  run.step = config.step;
  const absl::Status status = Consume(**loader, config, dump.get(), Clock::Real(), &run);
  run.stats = (*loader)->stats();
  (*loader)->Stop();
  if (!status.ok()) return Fail(status);

  std::printf("%s", FormatBenchReport(run).c_str());
  if (!config.report_json.empty()) {
    std::ofstream out(config.report_json, std::ios::trunc);
    out << FormatBenchReportJson(run) << "\n";
    if (!out) {
      return Fail(
          absl::UnavailableError(absl::StrCat("--report-json: cannot write ", config.report_json)));
    }
  }
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Run(argc, argv); }
