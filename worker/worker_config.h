#ifndef STOKER_WORKER_WORKER_CONFIG_H_
#define STOKER_WORKER_WORKER_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/retry.h"
#include "common/tls/tls_config.h"
#include "stoker/v1/common.pb.h"
#include "worker/advertise_address.h"
#include "worker/decoded_cache.h"
#include "worker/simulated_batch.h"

namespace stoker {

// Everything a worker process is configured with. Filled from flags in worker/main.cc or by
// tests; Validate() before use.
struct WorkerConfig {
  // host:port of the coordinator, or HOST:PORT,HOST:PORT... of its replicas (the worker follows
  // the leader; docs/decisions/0075-follow-the-leader.md).
  std::string coordinator_address;
  // Where to serve stoker.v1.Worker; port 0 picks a free port.
  std::string listen_address = "127.0.0.1:0";
  // The address clients dial, "host" (the bound port is appended) or "host:port"; never a
  // wildcard, never loopback when the coordinator is remote. Empty: derived from listen_address
  // and the route to the coordinator (worker/advertise_address.h).
  std::string advertise_address;
  // Producer threads; 0 means one per CPU the process may use (common/process_limits.h: its
  // affinity mask and its cgroup's CPU quota, rounded up). Also the cores reported to the
  // coordinator.
  uint32_t threads = 0;
  // Deadline of each unary call to the coordinator.
  absl::Duration rpc_timeout = absl::Seconds(10);
  // Retries of RegisterWorker while the coordinator is unreachable at start.
  BackoffPolicy register_backoff{absl::Milliseconds(100), absl::Seconds(2), 2.0, 30};
  // Longest pause between LeaseTasks polls of a stream that got no task.
  absl::Duration max_lease_poll = absl::Milliseconds(200);
  // On SIGTERM (WorkerServer::Drain): how long to keep delivering what the worker holds before
  // handing the rest back and closing streams. > 0.
  absl::Duration drain_deadline = absl::Seconds(10);
  // Serve only the trainer client with this id (hybrid mode: threads on the trainer's own host,
  // started by the client library); the coordinator lists this worker to no other client.
  std::string hybrid_client_id;
  // The worker is its process's only component (stoker-worker sets it): it then reports its
  // process's CPU time, which counts the gRPC threads sending its batches, for the advisor's
  // capacity model (WorkerStats.process_cpu_fraction). Inside another program (hybrid mode,
  // tests) the process's CPU is not the worker's alone, and is not reported.
  bool owns_process = false;
  // The worker pool it runs in (common/pool_name.h), told to the coordinator at registration:
  // prices and KEDA's per-pool worker counts go by it. Empty: the default pool.
  std::string pool;
  // Bench/test facility (worker/simulated_batch.h): when set, producers skip the source and
  // pipeline and emit a batch of the job's shape `simulate_batch_period` after taking its task
  // (zero: at once), i.e. at a fixed rate per producer thread. >= 0. Unset: real production.
  std::optional<absl::Duration> simulate_batch_period;
  // How a simulated batch spends its period: kSleep (no CPU) or kBurn (the producer thread
  // spends simulate_batch_cpu of its own CPU time writing the payload, then waits out the
  // rest). kBurn needs simulate_batch_period.
  SimulatedBatchMode simulate_batch_mode = SimulatedBatchMode::kSleep;
  // kBurn only: thread CPU time per batch, in [0, simulate_batch_period]. Unset: the whole
  // period (a CPU-bound producer).
  std::optional<absl::Duration> simulate_batch_cpu;
  // Limits (docs/security.md, "Limits"), each refused with an error naming its flag:
  // Most streams open at once; StreamBatches beyond it is RESOURCE_EXHAUSTED (--max-streams).
  uint32_t max_streams = 256;
  // Memory for batches, bytes; 0 = half the memory the process may use (its cgroup's memory
  // limit, else the machine's; common/process_limits.h). A stream of a job whose batch,
  // times the batches the worker holds at once to keep its threads busy (2 x threads + 1),
  // exceeds it is RESOURCE_EXHAUSTED (--memory-bytes).
  uint64_t memory_bytes = 0;
  // The decoded cache (worker/decoded_cache.h; jobs with JobSpec.decoded_cache on), bytes; 0:
  // none (--decoded-cache-bytes). A share of memory_bytes, at most kMaxDecodedCacheShare of it:
  // batches get the rest (BatchMemoryBytes); more is refused at start, naming both flags. Apart
  // from the shard cache's --cache-bytes (encoded shards, docs/storage.md).
  uint64_t decoded_cache_bytes = 0;
  static constexpr double kMaxDecodedCacheShare = 0.5;
  // Map and touch the whole decoded cache before registering (--decoded-cache-pretouch), as a
  // JVM's AlwaysPreTouch does for its heap: the worker's start pays the kernel's page zeroing once
  // and its resident memory holds the whole cache from the start, instead of the first epoch's
  // misses paying it per entry. Default off (memory is taken as entries need it).
  bool decoded_cache_pretouch = false;
  // How the decoded cache keeps pixels: kNone (raw) or kLz4 (--decoded-cache-compression).
  DecodedCacheCompression decoded_cache_compression = DecodedCacheCompression::kNone;
  // Largest client message read, bytes (Open, Credit, Ack are small; larger is
  // RESOURCE_EXHAUSTED before parsing) (--max-request-bytes).
  uint32_t max_request_bytes = 1 << 20;
  // Payload codecs offered to clients (--compression-codecs): a comma-separated list of "lz4"
  // and "zstd", or "none" to offer none (clients then get raw payloads whatever they ask).
  std::string offered_compression = "lz4,zstd";
  // TLS of its port and of its calls to the coordinator (common/tls/tls_config.h). Required:
  // the TLS files, or tls.insecure set explicitly; left empty, Validate() fails naming
  // tls.cert_file.
  TlsConfig tls;

  // INVALID_ARGUMENT naming the field.
  absl::Status Validate() const;
  // What the advertised address is chosen from (worker/advertise_address.h). Of several
  // coordinator replicas the first stands for all: they share one network.
  AdvertiseInputs advertise_inputs() const {
    return {advertise_address, listen_address,
            coordinator_address.substr(0, coordinator_address.find(',')),
            !hybrid_client_id.empty()};
  }
  // threads, with 0 resolved to the CPUs the process may use.
  uint32_t ResolvedThreads() const;
  // memory_bytes, with 0 resolved to half the memory the process may use.
  uint64_t ResolvedMemoryBytes() const;
  // What batches may hold: ResolvedMemoryBytes() less decoded_cache_bytes.
  uint64_t BatchMemoryBytes() const;
  // The producers' simulation from the simulate_batch_* fields; nullopt: real production.
  std::optional<SimulatedProduction> Simulation() const;
  // offered_compression parsed, or INVALID_ARGUMENT naming offered_compression.
  absl::StatusOr<std::vector<stoker::v1::Compression>> OfferedCodecs() const;
};

}  // namespace stoker

#endif  // STOKER_WORKER_WORKER_CONFIG_H_
