// stoker-worker: runs augmentation for the jobs of a coordinator and streams batches to clients.

#include <cstdio>
#include <string>

#include "common/flags.h"
#include "common/logging.h"
#include "common/metrics.h"
#include "common/process.h"
#include "common/tls/tls_config.h"
#include "data/storage_backend.h"
#include "worker/simulated_batch.h"
#include "worker/worker_metrics.h"
#include "worker/worker_server.h"

namespace {

// Serves until SIGINT/SIGTERM, then drains and stops; the process's exit code.
int Serve(const stoker::WorkerConfig& config, const std::string& port_file,
          const stoker::MetricsFlags& metrics_flags) {
  stoker::BlockTerminationSignals();
  absl::StatusOr<std::unique_ptr<stoker::WorkerServer>> server =
      stoker::WorkerServer::Start(config);
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
  const auto storage_metrics = std::make_shared<stoker::StorageMetrics>();
  if (*metrics_server != nullptr) (*metrics_server)->Register(storage_metrics);
  std::printf("stoker-worker serving on %s with %u threads\n", (*server)->address().c_str(),
              config.ResolvedThreads());
  std::fflush(stdout);
  const int signal = stoker::WaitForTerminationSignal();
  STOKER_LOG(INFO) << "signal " << signal << ": draining (at most "
                   << absl::FormatDuration(config.drain_deadline) << "), then stopping";
  metrics_server->reset();  // Stop scraping before the worker goes.
  (*server)->Drain();
  (*server)->Stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  stoker::WorkerConfig config;
  config.coordinator_address = "127.0.0.1:7070";  // The coordinator binary's default.
  int64_t lease_poll_ms = absl::ToInt64Milliseconds(config.max_lease_poll);
  int64_t rpc_timeout_ms = absl::ToInt64Milliseconds(config.rpc_timeout);
  int64_t drain_deadline_ms = absl::ToInt64Milliseconds(config.drain_deadline);
  uint32_t register_attempts = static_cast<uint32_t>(config.register_backoff.max_attempts);
  std::string port_file;
  double simulate_batch_ms = -1;
  std::string simulate_batch_mode = "sleep";
  double simulate_batch_cpu_ms = -1;
  stoker::FlagSet flags("stoker-worker",
                        "Runs a Stoker worker: leases tasks from the coordinator, produces "
                        "batches on a thread pool and streams them to trainer clients.");
  flags.Add("coordinator", &config.coordinator_address, "host:port of the coordinator");
  flags.Add("listen", &config.listen_address, "host:port to serve on (port 0 = any free port)");
  flags.Add("advertise-address", &config.advertise_address,
            "host or host:port trainer clients dial (the bound port when none; default: the "
            "host of --listen, or for 0.0.0.0 the local address that routes to the "
            "coordinator; Kubernetes: the pod IP)");
  flags.Add("threads", &config.threads, "producer threads (0 = one per core)");
  flags.Add("rpc-timeout-ms", &rpc_timeout_ms, "deadline of each call to the coordinator");
  flags.Add("register-attempts", &register_attempts,
            "attempts to register while the coordinator is unreachable");
  flags.Add("max-lease-poll-ms", &lease_poll_ms, "longest pause between polls for tasks");
  flags.Add("port-file", &port_file, "write the bound port to this file once serving");
  flags.Add("simulate-batch-ms", &simulate_batch_ms,
            "bench/test facility: skip the pipeline and emit each batch this many ms after its "
            "task is taken, per producer thread (negative = real production)");
  flags.Add("simulate-batch-mode", &simulate_batch_mode,
            "with --simulate-batch-ms: sleep (the producer thread waits out each batch's time) "
            "or burn (it spends --simulate-batch-cpu-ms of its own CPU time writing the payload "
            "first, competing for cores like a real producer)");
  flags.Add("simulate-batch-cpu-ms", &simulate_batch_cpu_ms,
            "with --simulate-batch-mode burn: thread CPU ms per batch, at most "
            "--simulate-batch-ms (negative = all of it)");
  flags.Add("drain-deadline-ms", &drain_deadline_ms,
            "on SIGTERM/SIGINT, deliver held tasks for at most this long, then hand the rest back");
  flags.Add("max-streams", &config.max_streams,
            "most streams open at once (beyond: RESOURCE_EXHAUSTED)");
  flags.Add("memory-bytes", &config.memory_bytes,
            "memory for batches, bytes (0 = half the machine's); a job whose batches the worker "
            "cannot hold is refused");
  flags.Add("max-request-bytes", &config.max_request_bytes, "largest client message read, bytes");
  flags.Add("compression-codecs", &config.offered_compression,
            "payload codecs offered to clients: lz4,zstd (comma-separated) or none");
  stoker::MetricsFlags metrics_flags;
  metrics_flags.AddTo(&flags);
  stoker::StorageFlags storage_flags;  // --s3-endpoint, --cache-dir, --cache-bytes, ...
  storage_flags.AddTo(&flags, /*with_cache=*/true);
  stoker::LogFlags log_flags;
  log_flags.AddTo(&flags);
  stoker::TlsFlags tls_flags;  // Its certificate names role worker (or --insecure).
  tls_flags.AddTo(&flags, /*calls=*/true, /*serves=*/true);
  flags.MapField("coordinator_address", "coordinator");
  flags.MapField("listen_address", "listen");
  flags.MapField("advertise_address", "advertise-address");
  flags.MapField("threads", "threads");
  flags.MapField("rpc_timeout", "rpc-timeout-ms");
  flags.MapField("register_backoff.max_attempts", "register-attempts");
  flags.MapField("max_lease_poll", "max-lease-poll-ms");
  flags.MapField("drain_deadline", "drain-deadline-ms");
  flags.MapField("simulate_batch_period", "simulate-batch-ms");
  flags.MapField("simulate_batch_mode", "simulate-batch-mode");
  flags.MapField("simulate_batch_cpu", "simulate-batch-cpu-ms");
  flags.MapField("max_streams", "max-streams");
  flags.MapField("memory_bytes", "memory-bytes");
  flags.MapField("max_request_bytes", "max-request-bytes");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (absl::Status status = log_flags.Apply(); !status.ok()) return flags.Fail(status);
  config.rpc_timeout = absl::Milliseconds(rpc_timeout_ms);
  config.max_lease_poll = absl::Milliseconds(lease_poll_ms);
  config.drain_deadline = absl::Milliseconds(drain_deadline_ms);
  config.register_backoff.max_attempts = static_cast<int>(register_attempts);
  absl::StatusOr<stoker::TlsConfig> tls = tls_flags.Build();
  if (!tls.ok()) return flags.Fail(tls.status());
  config.tls = *std::move(tls);
  if (simulate_batch_ms >= 0) {
    config.simulate_batch_period =
        absl::Microseconds(static_cast<int64_t>(simulate_batch_ms * 1000));
  }
  absl::StatusOr<stoker::SimulatedBatchMode> mode =
      stoker::ParseSimulatedBatchMode(simulate_batch_mode);
  if (!mode.ok()) return flags.Fail(mode.status());
  config.simulate_batch_mode = *mode;
  if (simulate_batch_cpu_ms >= 0) {
    config.simulate_batch_cpu =
        absl::Microseconds(static_cast<int64_t>(simulate_batch_cpu_ms * 1000));
  }
  if (absl::Status status = config.Validate(); !status.ok()) return flags.Fail(status);
  if (absl::Status status = storage_flags.Apply(); !status.ok()) return flags.Fail(status);

  return Serve(config, port_file, metrics_flags);
}
