#ifndef STOKER_COORDINATOR_COORDINATOR_CONFIG_H_
#define STOKER_COORDINATOR_COORDINATOR_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/tls/tls_config.h"
#include "coordinator/advisor.h"
#include "coordinator/scale_target.h"

namespace stoker {

// Settings of a coordinator. Filled from flags in main.cc (or by tests), then validated.
struct CoordinatorConfig {
  // host:port to serve on; port 0 picks a free port (CoordinatorServer reports it).
  std::string listen_address = "127.0.0.1:0";
  // host:port that clients reach this replica at: a standby names itself by it, and the
  // others name it as the leader's (--advertise-address); empty: the bound listen address.
  std::string advertise_address;
  // With state: load it in the background, waiting while etcd is unreachable, instead of
  // failing the start. Not a flag: stoker-coordinator sets it when it runs itself again after
  // stepping down (a first start fails fast, naming the endpoint).
  bool wait_for_state = false;
  // How often workers heartbeat (told to them in RegisterWorkerResponse), and how often the
  // server checks liveness.
  absl::Duration heartbeat_interval = absl::Milliseconds(500);
  // A worker whose last heartbeat is older than this is removed; its leases return to pending.
  absl::Duration worker_timeout = absl::Seconds(5);
  // How long a worker holds a leased task before it may go to another worker.
  absl::Duration lease_duration = absl::Seconds(30);
  // Most tasks one LeaseTasks call returns, whatever the worker asks for.
  uint32_t max_tasks_per_lease = 64;
  // A job none of whose clients heartbeated (or opened it) for this long is retired, finished
  // or abandoned: a journaled retire_job drops it and workers evict its context. Must be longer
  // than the clients' heartbeat interval.
  absl::Duration job_idle_timeout = absl::Minutes(10);
  // File journal (coordinator/journal.h) of the state that survives a restart; empty = none
  // (state lives in memory only).
  std::string journal_path;
  // Replicated coordinators (docs/architecture.md, "Replicated coordinators"): the state in
  // etcd instead of a journal file, "etcd://HOST:PORT[,HOST:PORT...]/PREFIX" (--state); empty:
  // journal_path (or memory). The replicas that share it elect one leader; the others stand by.
  std::string state;
  // etcd's client TLS (--etcd-ca, --etcd-cert, --etcd-key); all empty: plaintext.
  std::string etcd_ca_file;
  std::string etcd_cert_file;
  std::string etcd_key_file;
  // The leader key's lease (--leader-lease-ttl-ms): a leader that dies is replaced after about
  // this long; renewed every third of it.
  absl::Duration leader_lease_ttl = absl::Seconds(2);
  // The tenant policy file (coordinator/tenant_policy.h, --tenant-policy): tenants' weights and
  // quotas, re-read when it changes. Empty: every tenant has weight 1 and no quota.
  std::string tenant_policy_path;
  // Limits (docs/security.md, "Limits"), each refused with an error naming its flag:
  // Most jobs held; OpenJob of a new job beyond it is RESOURCE_EXHAUSTED (--max-jobs). Jobs
  // leave by retirement (job_idle_timeout).
  uint32_t max_jobs = 4096;
  // Longest job name, bytes; longer is INVALID_ARGUMENT (--max-job-name-bytes).
  uint32_t max_job_name_bytes = 256;
  // Most ops in a job's pipeline; more is INVALID_ARGUMENT (--max-pipeline-ops).
  uint32_t max_pipeline_ops = 64;
  // Largest spec.world_size (ranks of one job); larger is INVALID_ARGUMENT (--max-world-size).
  // Ranks size the coordinator's per-rank work (status, metrics, resumes).
  uint32_t max_world_size = 16384;
  // Largest spec.epochs; larger is INVALID_ARGUMENT (--max-epochs).
  uint32_t max_epochs = 100000;
  // Largest spec.batch_size, samples; larger is INVALID_ARGUMENT (--max-batch-size). Batch
  // bytes are bounded separately (kMaxBatchBytes).
  uint32_t max_batch_size = 65536;
  // Most global batches a resumed epoch may span (a resume token's `universe`, the work and
  // memory of PlanResume); more is INVALID_ARGUMENT (--max-resume-batches). At most
  // kMaxResumeUniverse (plan/resume_plan.h): a resumed rank's batches fit one journal record.
  uint64_t max_resume_batches = uint64_t{1} << 22;
  // Longest client id and worker address, bytes; longer is INVALID_ARGUMENT (--max-id-bytes).
  uint32_t max_id_bytes = 256;
  // Largest request message read, bytes: gRPC's max receive size, a larger one is
  // RESOURCE_EXHAUSTED before it is parsed (--max-request-bytes).
  uint32_t max_request_bytes = 4 << 20;
  // Most calls in flight on one client connection (HTTP/2 max concurrent streams); a client
  // opening more waits for one to end (--max-calls-per-connection).
  uint32_t max_calls_per_connection = 256;
  // Memory gRPC may use for connections and messages (its resource quota), bytes; past it new
  // connections and reads are refused or wait (--grpc-memory-bytes).
  uint64_t grpc_memory_bytes = 256ull << 20;
  // Longest trace window StartTrace opens, seconds; longer is INVALID_ARGUMENT
  // (--max-trace-seconds).
  uint32_t max_trace_seconds = 600;
  // Spans kept per traced job; more are dropped and counted in GetTrace (--max-trace-spans).
  uint64_t max_trace_spans = 262144;
  // Its port's TLS (common/tls/tls_config.h). Required: the TLS files, or tls.insecure set
  // explicitly; left empty, Validate() fails naming tls.cert_file.
  TlsConfig tls;
  // How the advisor judges and prices (--gpu-node-dollars-per-hour, --worker-dollars-per-hour,
  // --worker-pool-dollars-per-hour; advisor.prices is validated).
  AdvisorConfig advisor;
  // How the KEDA external scaler holds its counts steady (--scaler-hysteresis-workers,
  // --scaler-cooldown-ms).
  ScaleDeciderConfig scaler;

  // INVALID_ARGUMENT naming the field ("worker_timeout: ...") when a setting is unusable:
  // an address without a port, a duration <= 0, a worker_timeout not above
  // heartbeat_interval, max_tasks_per_lease 0, a job_idle_timeout <= 0, a limit of 0 (or a
  // max_request_bytes under 64 KiB, a grpc_memory_bytes under 16 MiB), bad prices
  // (advisor.prices.*) or scaler settings (scaler.*), a tenant policy file that does not load
  // ("tenant_policy_path: ..."), replication settings that do not fit (state with a journal, a
  // state that is not etcd://HOST:PORT/PREFIX, a lease TTL not whole seconds, no
  // advertise_address beside a wildcard listen host, etcd TLS files without a state).
  absl::Status Validate() const;

  static constexpr uint32_t kMinRequestBytes = 64 << 10;
  static constexpr uint64_t kMinGrpcMemoryBytes = 16ull << 20;

 private:
  absl::Status ValidateLimits() const;
  // state, the etcd TLS files, leader_lease_ttl and advertise_address.
  absl::Status ValidateReplication() const;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_COORDINATOR_CONFIG_H_
