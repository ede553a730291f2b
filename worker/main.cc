// stoker-worker: runs augmentation for the jobs of a coordinator and streams batches to clients.

#include <cstdio>
#include <string>

#include "absl/time/time.h"
#include "common/flags.h"
#include "common/heap_tuning.h"
#include "common/logging.h"
#include "common/metrics.h"
#include "common/mutex_tuning.h"
#include "common/process.h"
#include "common/process_limits.h"
#include "common/tls/tls_config.h"
#include "coordinator/coordinator_client.h"
#include "data/storage_backend.h"
#include "data/storage_flags.h"
#include "worker/simulated_batch.h"
#include "worker/worker_metrics.h"
#include "worker/worker_server.h"

namespace {

// Serves until SIGINT/SIGTERM, reading datasets through `io`, then drains and stops; the
// process's exit code.
int Serve(const stoker::WorkerConfig& config, const stoker::DatasetIo& io,
          const std::string& port_file, const stoker::MetricsFlags& metrics_flags) {
  stoker::BlockTerminationSignals();
  absl::StatusOr<std::unique_ptr<stoker::WorkerServer>> server =
      stoker::WorkerServer::Start(config, io);
  if (!server.ok()) {
    std::fprintf(stderr, "stoker-worker: %s\n", server.status().ToString().c_str());
    return 1;
  }
  if (!port_file.empty()) {
    if (absl::Status status = stoker::WritePortFile(port_file, (*server)->port()); !status.ok()) {
      std::fprintf(stderr, "stoker-worker: %s\n", status.ToString().c_str());
      return 1;
    }
  }
  const auto metrics = std::make_shared<stoker::WorkerMetrics>((*server)->worker());
  absl::StatusOr<std::unique_ptr<stoker::MetricsServer>> metrics_server =
      metrics_flags.Serve(metrics);
  if (!metrics_server.ok()) {
    std::fprintf(stderr, "stoker-worker: %s\n", metrics_server.status().ToString().c_str());
    return 1;
  }
  const auto storage_metrics = std::make_shared<stoker::StorageMetrics>(io.storage);
  if (*metrics_server != nullptr) (*metrics_server)->Register(storage_metrics);
  STOKER_LOG(INFO) << "this process may use " << stoker::OwnProcessLimits().description;
  // tests/containers/limits_test.py reads the budget (--memory-bytes, the decoded cache's share
  // included) from this line.
  std::printf("stoker-worker serving on %s with %u threads and %llu bytes for batches\n",
              (*server)->address().c_str(), config.ResolvedThreads(),
              static_cast<unsigned long long>(config.ResolvedMemoryBytes()));
  std::fflush(stdout);
  const int signal = stoker::WaitForTerminationSignal();
  STOKER_LOG(INFO) << "signal " << signal << ": draining (at most "
                   << absl::FormatDuration(config.drain_deadline) << "), then stopping";
  metrics_server->reset();  // Stop scraping before the worker goes.
  (*server)->Drain();
  (*server)->Stop();
  return 0;
}

// The flags that are not WorkerConfig fields as they are parsed (counts, optional milliseconds,
// names), and the flag groups of other libraries.
struct FlagValues {
  explicit FlagValues(const stoker::WorkerConfig& defaults)
      : register_attempts(static_cast<uint32_t>(defaults.register_backoff.max_attempts)) {}

  // Converts the values into `config` and validates it; INVALID_ARGUMENT naming the flag.
  absl::Status ApplyTo(stoker::WorkerConfig& config) const;

  uint32_t register_attempts;
  std::string port_file;
  double simulate_batch_ms = -1;
  std::string simulate_batch_mode = "sleep";
  double simulate_batch_cpu_ms = -1;
  std::string decoded_cache_compression = "none";
  stoker::MetricsFlags metrics;
  stoker::StorageFlags storage;  // --s3-endpoint, --cache-dir, --cache-bytes, ...
  stoker::LogFlags log;
  stoker::TlsFlags tls;  // Its certificate names role worker (or --insecure).
};

absl::Status FlagValues::ApplyTo(stoker::WorkerConfig& config) const {
  config.register_backoff.max_attempts = static_cast<int>(register_attempts);
  config.owns_process = true;  // this process is the worker alone
  absl::StatusOr<stoker::TlsConfig> built = tls.Build();
  if (!built.ok()) return built.status();
  config.tls = *std::move(built);
  if (simulate_batch_ms >= 0) {
    config.simulate_batch_period =
        absl::Microseconds(static_cast<int64_t>(simulate_batch_ms * 1000));
  }
  absl::StatusOr<stoker::SimulatedBatchMode> mode =
      stoker::ParseSimulatedBatchMode(simulate_batch_mode);
  if (!mode.ok()) return mode.status();
  config.simulate_batch_mode = *mode;
  absl::StatusOr<stoker::DecodedCacheCompression> cache_compression =
      stoker::ParseDecodedCacheCompression(decoded_cache_compression,
                                           "--decoded-cache-compression");
  if (!cache_compression.ok()) return cache_compression.status();
  config.decoded_cache_compression = *cache_compression;
  if (simulate_batch_cpu_ms >= 0) {
    config.simulate_batch_cpu =
        absl::Microseconds(static_cast<int64_t>(simulate_batch_cpu_ms * 1000));
  }
  return config.Validate();
}

// Every flag of stoker-worker, into `config` or `values`.
void AddFlags(stoker::FlagSet& flags, stoker::WorkerConfig& config, FlagValues& values) {
  flags.Add("coordinator", &config.coordinator_address, stoker::kCoordinatorFlagHelp);
  flags.Add("listen", &config.listen_address, "host:port to serve on (port 0 = any free port)");
  flags.Add("advertise-address", &config.advertise_address,
            "host or host:port trainer clients dial (the bound port when none; default: the "
            "host of --listen, or for 0.0.0.0 the local address that routes to the "
            "coordinator; Kubernetes: the pod IP)");
  flags.Add("threads", &config.threads,
            "producer threads (0 = one per CPU the process may use: affinity and cgroup quota)");
  flags.Add("pool", &config.pool,
            "worker pool (instance type) it runs in, e.g. cpu-a: the coordinator prices and "
            "scales workers by pool");
  flags.Add("rpc-timeout-ms", &config.rpc_timeout, absl::Milliseconds(1),
            "deadline of each call to the coordinator");
  flags.Add("register-attempts", &values.register_attempts,
            "attempts to register while the coordinator is unreachable");
  flags.Add("max-lease-poll-ms", &config.max_lease_poll, absl::Milliseconds(1),
            "longest pause between polls for tasks");
  flags.Add("port-file", &values.port_file, "write the bound port to this file once serving");
  flags.Add("simulate-batch-ms", &values.simulate_batch_ms,
            "bench/test facility: skip the pipeline and emit each batch this many ms after its "
            "task is taken, per producer thread (negative = real production)");
  flags.Add("simulate-batch-mode", &values.simulate_batch_mode,
            "with --simulate-batch-ms: sleep (the producer thread waits out each batch's time) "
            "or burn (it spends --simulate-batch-cpu-ms of its own CPU time writing the payload "
            "first, competing for cores like a real producer)");
  flags.Add("simulate-batch-cpu-ms", &values.simulate_batch_cpu_ms,
            "with --simulate-batch-mode burn: thread CPU ms per batch, at most "
            "--simulate-batch-ms (negative = all of it)");
  flags.Add("drain-deadline-ms", &config.drain_deadline, absl::Milliseconds(1),
            "on SIGTERM/SIGINT, deliver held tasks for at most this long, then hand the rest back");
  flags.Add("max-streams", &config.max_streams,
            "most streams open at once (beyond: RESOURCE_EXHAUSTED)");
  flags.Add("memory-bytes", &config.memory_bytes,
            "memory for batches, bytes (0 = half the cgroup's memory limit, else of the "
            "machine's); a job whose batches the worker "
            "cannot hold is refused");
  flags.Add("decoded-cache-bytes", &config.decoded_cache_bytes,
            "bytes of decoded images kept for jobs with the decoded cache on (0 = none); a share "
            "of --memory-bytes, at most half of it (batches get the rest)");
  flags.Add("decoded-cache-pretouch", &config.decoded_cache_pretouch,
            "map and touch the whole decoded cache before registering: the start pays the "
            "kernel's first touch of its pages, not the first epoch's misses");
  flags.Add("decoded-cache-compression", &values.decoded_cache_compression,
            "how the decoded cache keeps pixels: none or lz4 (fewer bytes, more CPU per hit)");
  flags.Add("max-request-bytes", &config.max_request_bytes, "largest client message read, bytes");
  flags.Add("compression-codecs", &config.offered_compression,
            "payload codecs offered to clients: lz4,zstd (comma-separated) or none");
  values.metrics.AddTo(&flags);
  values.storage.AddTo(&flags, /*with_cache=*/true);
  values.log.AddTo(&flags);
  values.tls.AddTo(&flags, /*calls=*/true, /*serves=*/true);
  flags.MapField("coordinator_address", "coordinator");
  flags.MapField("listen_address", "listen");
  flags.MapField("advertise_address", "advertise-address");
  flags.MapField("threads", "threads");
  flags.MapField("pool", "pool");
  flags.MapField("rpc_timeout", "rpc-timeout-ms");
  flags.MapField("register_backoff.max_attempts", "register-attempts");
  flags.MapField("max_lease_poll", "max-lease-poll-ms");
  flags.MapField("drain_deadline", "drain-deadline-ms");
  flags.MapField("simulate_batch_period", "simulate-batch-ms");
  flags.MapField("simulate_batch_mode", "simulate-batch-mode");
  flags.MapField("simulate_batch_cpu", "simulate-batch-cpu-ms");
  flags.MapField("max_streams", "max-streams");
  flags.MapField("memory_bytes", "memory-bytes");
  flags.MapField("decoded_cache_bytes", "decoded-cache-bytes");
  flags.MapField("decoded_cache_pretouch", "decoded-cache-pretouch");
  flags.MapField("max_request_bytes", "max-request-bytes");
}

}  // namespace

int main(int argc, char** argv) {
  stoker::WorkerConfig config;
  config.coordinator_address = "127.0.0.1:7070";  // The coordinator binary's default.
  FlagValues values(config);
  stoker::FlagSet flags("stoker-worker",
                        "Runs a Stoker worker: leases tasks from the coordinator, produces "
                        "batches on a thread pool and streams them to trainer clients.");
  AddFlags(flags, config, values);
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (absl::Status status = values.log.Apply(); !status.ok()) return flags.Fail(status);
  // Sending (TLS above all: its record buffers) frees and reallocates large blocks per batch.
  stoker::RetainFreedHeapMemory();
  stoker::SkipMutexDeadlockDetection();
  if (absl::Status status = values.ApplyTo(config); !status.ok()) return flags.Fail(status);
  absl::StatusOr<stoker::DatasetIo> io = values.storage.BuildDatasetIo();
  if (!io.ok()) return flags.Fail(io.status());
  return Serve(config, *io, values.port_file, values.metrics);
}
