// stoker-coordinator: serves stoker.v1.Coordinator until SIGINT or SIGTERM.
//
//   stoker-coordinator --listen=0.0.0.0:7070 --port-file=/tmp/coordinator.port

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/flags.h"
#include "common/logging.h"
#include "common/metrics.h"
#include "common/process.h"
#include "common/status_macros.h"
#include "common/tls/tls_config.h"
#include "coordinator/coordinator_config.h"
#include "coordinator/coordinator_metrics.h"
#include "coordinator/coordinator_server.h"
#include "coordinator/prices.h"
#include "coordinator/scale_target.h"
#include "data/dataset_io.h"
#include "data/storage_flags.h"

namespace stoker {
namespace {

// Set in the environment of a replica that runs itself again (StandByAgain): it then waits for
// etcd (CoordinatorConfig::wait_for_state) where a first start would fail.
constexpr char kStandingByAgain[] = "STOKER_COORDINATOR_STANDING_BY_AGAIN";

// A replica that stopped leading (coordinator/etcd/coordinator_replica.h) runs this binary again
// with the same arguments, in the same process: its memory may hold changes etcd never took, and
// it comes back as a standby that loads what etcd holds. An orchestrator sees no restart, and a
// standby is back within the start-up time instead of a crash loop's back-off.
[[noreturn]] void StandByAgain(char** argv, const absl::Status& why) {
  STOKER_LOG(ERROR) << "re-executing to stand by again (" << why.message() << ")";
  setenv(kStandingByAgain, "1", /*overwrite=*/1);
  execv("/proc/self/exe", argv);
  std::fprintf(stderr, "stoker-coordinator: re-executing failed: %s\n", std::strerror(errno));
  std::_Exit(3);
}

// Serves `config` (validated), reading datasets through `io`, until SIGINT or SIGTERM; writes
// the bound port to `port_file` (unless empty) and serves metrics as `metrics_flags` say. The
// exit code.
int Serve(const CoordinatorConfig& config, const DatasetIo& io, const std::string& port_file,
          const MetricsFlags& metrics_flags, char** argv) {
  auto server =
      CoordinatorServer::Start(config, io, Clock::Real(), PosixJournalEnv(), SoleLeadership(),
                               [argv](const absl::Status& why) { StandByAgain(argv, why); });
  if (!server.ok()) {
    std::fprintf(stderr, "stoker-coordinator: %s\n", server.status().ToString().c_str());
    return 1;
  }
  if (!port_file.empty()) {
    if (absl::Status status = WritePortFile(port_file, (*server)->port()); !status.ok()) {
      std::fprintf(stderr, "stoker-coordinator: %s\n", status.ToString().c_str());
      return 1;
    }
  }
  const auto metrics = std::make_shared<CoordinatorMetrics>(
      (*server)->coordinator(), (*server)->call_latencies(), (*server)->leadership());
  absl::StatusOr<std::unique_ptr<MetricsServer>> metrics_server = metrics_flags.Serve(metrics);
  if (!metrics_server.ok()) {
    std::fprintf(stderr, "stoker-coordinator: %s\n", metrics_server.status().ToString().c_str());
    return 1;
  }
  // The listen host as given (0.0.0.0 stays 0.0.0.0) with the bound port, and the address a
  // client on this host dials.
  const std::string listen_host = config.listen_address.substr(0, config.listen_address.rfind(':'));
  std::printf("stoker-coordinator listening on %s:%d (dial %s on this host)\n", listen_host.c_str(),
              (*server)->port(), (*server)->address().c_str());
  std::fflush(stdout);

  const int signal_number = WaitForTerminationSignal();
  STOKER_LOG(INFO) << "received signal " << signal_number << "; stopping";
  metrics_server->reset();  // Stop scraping before the coordinator goes.
  (*server)->Stop();
  return 0;
}

// The flags of the limits (docs/security.md, "Limits") into `limits`, mapped to their fields.
void AddLimitFlags(FlagSet* flags, CoordinatorConfig* limits) {
  flags->Add("max-jobs", &limits->max_jobs,
             "Most jobs held; OpenJob of a new one beyond it is RESOURCE_EXHAUSTED");
  flags->Add("max-job-name-bytes", &limits->max_job_name_bytes, "Longest job name, bytes");
  flags->Add("max-pipeline-ops", &limits->max_pipeline_ops, "Most ops in a job's pipeline");
  flags->Add("max-world-size", &limits->max_world_size, "Most ranks of one job");
  flags->Add("max-epochs", &limits->max_epochs, "Most epochs of one job");
  flags->Add("max-batch-size", &limits->max_batch_size, "Largest batch, samples");
  flags->Add("max-resume-batches", &limits->max_resume_batches,
             "Most global batches a resumed epoch may span (a resume token's universe)");
  flags->Add("max-id-bytes", &limits->max_id_bytes, "Longest client id and worker address, bytes");
  flags->Add("max-request-bytes", &limits->max_request_bytes,
             "Largest request message read, bytes (larger: RESOURCE_EXHAUSTED)");
  flags->Add("max-calls-per-connection", &limits->max_calls_per_connection,
             "Most calls in flight on one client connection");
  flags->Add("grpc-memory-bytes", &limits->grpc_memory_bytes,
             "Memory gRPC may use for connections and messages, bytes");
  flags->Add("max-trace-seconds", &limits->max_trace_seconds,
             "Longest trace window StartTrace opens, seconds");
  flags->Add("max-trace-spans", &limits->max_trace_spans, "Spans kept per traced job");
  flags->MapField("max_jobs", "max-jobs");
  flags->MapField("max_job_name_bytes", "max-job-name-bytes");
  flags->MapField("max_pipeline_ops", "max-pipeline-ops");
  flags->MapField("max_world_size", "max-world-size");
  flags->MapField("max_epochs", "max-epochs");
  flags->MapField("max_batch_size", "max-batch-size");
  flags->MapField("max_resume_batches", "max-resume-batches");
  flags->MapField("max_id_bytes", "max-id-bytes");
  flags->MapField("max_request_bytes", "max-request-bytes");
  flags->MapField("max_calls_per_connection", "max-calls-per-connection");
  flags->MapField("grpc_memory_bytes", "grpc-memory-bytes");
  flags->MapField("max_trace_seconds", "max-trace-seconds");
  flags->MapField("max_trace_spans", "max-trace-spans");
}

// The advisor's prices and the KEDA scaler's steadiness: flags into `prices` and `scaler`
// (the pool price list is converted after parsing).
struct AdvisorFlags {
  Prices prices;
  std::string pool_prices;
  ScaleDeciderConfig scaler;

  void AddTo(FlagSet* flags) {
    flags->Add(
        "gpu-node-dollars-per-hour", &prices.gpu_node_dollars_per_hour,
        "Price of one GPU node (one trainer rank), for the advisor's dollars (0 = unpriced)");
    flags->Add("worker-dollars-per-hour", &prices.worker_dollars_per_hour,
               "Price of one worker of a pool without its own price");
    flags->Add("worker-pool-dollars-per-hour", &pool_prices,
               "Per-pool worker prices (workers' --pool), e.g. cpu-a=0.816,cpu-b=0.5");
    flags->Add("scaler-hysteresis-workers", &scaler.hysteresis_workers,
               "KEDA scaler: a fall in the advised workers smaller than this is not reported");
    flags->Add("scaler-cooldown-ms", &scaler.cooldown, absl::Milliseconds(1),
               "KEDA scaler: no fall, and no reversal, sooner than this after a change");
    flags->MapField("advisor.prices.gpu_node_dollars_per_hour", "gpu-node-dollars-per-hour");
    flags->MapField("advisor.prices.worker_dollars_per_hour", "worker-dollars-per-hour");
    flags->MapField("advisor.prices.worker_pool_dollars_per_hour", "worker-pool-dollars-per-hour");
    flags->MapField("scaler.hysteresis_workers", "scaler-hysteresis-workers");
    flags->MapField("scaler.cooldown", "scaler-cooldown-ms");
  }

  absl::Status ApplyTo(CoordinatorConfig* config) const {
    ASSIGN_OR_RETURN(config->advisor.prices.worker_pool_dollars_per_hour,
                     ParsePoolPrices("advisor.prices.worker_pool_dollars_per_hour", pool_prices));
    config->advisor.prices.gpu_node_dollars_per_hour = prices.gpu_node_dollars_per_hour;
    config->advisor.prices.worker_dollars_per_hour = prices.worker_dollars_per_hour;
    config->scaler = scaler;
    return absl::OkStatus();
  }
};

int Run(int argc, char** argv) {
  std::string listen = "127.0.0.1:7070";
  std::string port_file;
  CoordinatorConfig config;  // Its defaults are the flags'.

  FlagSet flags("stoker-coordinator",
                "Hands out Stoker jobs' tasks to workers and tracks their progress.");
  flags.Add("listen", &listen, "host:port to serve on (port 0 = any free port)");
  flags.Add("heartbeat-interval-ms", &config.heartbeat_interval, absl::Milliseconds(1),
            "How often workers heartbeat");
  flags.Add("worker-timeout-ms", &config.worker_timeout, absl::Milliseconds(1),
            "A worker silent this long is removed and its leases return to pending");
  flags.Add("lease-duration-ms", &config.lease_duration, absl::Milliseconds(1),
            "How long a task lease lasts");
  flags.Add("max-tasks-per-lease", &config.max_tasks_per_lease,
            "Most tasks one LeaseTasks returns");
  flags.Add("job-idle-timeout-ms", &config.job_idle_timeout, absl::Milliseconds(1),
            "A job none of whose clients heartbeated for this long (finished or abandoned) is "
            "retired and workers drop it");
  AddLimitFlags(&flags, &config);
  AdvisorFlags advisor_flags;
  advisor_flags.AddTo(&flags);
  flags.Add("port-file", &port_file, "Write the bound port to this file once serving");
  flags.Add("journal", &config.journal_path,
            "Journal file of the state that survives a restart (empty = memory only)");
  flags.Add("state", &config.state,
            "Keep the state in etcd instead of a journal: etcd://HOST:PORT[,HOST:PORT...]/PREFIX. "
            "Replicas given the same state elect one leader; the others stand by");
  flags.Add("etcd-ca", &config.etcd_ca_file, "CA bundle that etcd's certificates chain to");
  flags.Add("etcd-cert", &config.etcd_cert_file, "Client certificate presented to etcd");
  flags.Add("etcd-key", &config.etcd_key_file, "Private key of --etcd-cert");
  flags.Add("leader-lease-ttl-ms", &config.leader_lease_ttl, absl::Milliseconds(1),
            "With --state: the leader's lease; a dead leader is replaced after about this long "
            "(whole seconds)");
  flags.Add("advertise-address", &config.advertise_address,
            "With --state: host:port that clients reach this replica at (default: --listen)");
  flags.Add("tenant-policy", &config.tenant_policy_path,
            "JSON file of the tenants' weights and quotas (proto/stoker/v1/tenants.proto), "
            "re-read when it changes (empty = weight 1 and no quota for every tenant)");
  MetricsFlags metrics_flags;
  metrics_flags.AddTo(&flags);
  StorageFlags storage_flags;  // --s3-endpoint, --s3-region, --s3-addressing (manifests).
  storage_flags.AddTo(&flags, /*with_cache=*/false);
  LogFlags log_flags;
  log_flags.AddTo(&flags);
  TlsFlags tls_flags;  // Its certificate names role coordinator (or --insecure).
  tls_flags.AddTo(&flags, /*calls=*/false, /*serves=*/true);
  flags.MapField("listen_address", "listen");
  flags.MapField("heartbeat_interval", "heartbeat-interval-ms");
  flags.MapField("worker_timeout", "worker-timeout-ms");
  flags.MapField("lease_duration", "lease-duration-ms");
  flags.MapField("max_tasks_per_lease", "max-tasks-per-lease");
  flags.MapField("job_idle_timeout", "job-idle-timeout-ms");
  flags.MapField("journal_path", "journal");
  flags.MapField("tenant_policy_path", "tenant-policy");
  flags.MapField("state", "state");
  flags.MapField("etcd_ca_file", "etcd-ca");
  flags.MapField("etcd_cert_file", "etcd-cert");
  flags.MapField("etcd_key_file", "etcd-key");
  flags.MapField("leader_lease_ttl", "leader-lease-ttl-ms");
  flags.MapField("advertise_address", "advertise-address");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (absl::Status status = log_flags.Apply(); !status.ok()) return flags.Fail(status);

  config.listen_address = listen;
  config.wait_for_state = std::getenv(kStandingByAgain) != nullptr;
  absl::StatusOr<TlsConfig> tls = tls_flags.Build();
  if (!tls.ok()) return flags.Fail(tls.status());
  config.tls = *std::move(tls);
  if (absl::Status status = advisor_flags.ApplyTo(&config); !status.ok()) {
    return flags.Fail(status);
  }
  if (absl::Status status = config.Validate(); !status.ok()) {
    return flags.Fail(status);
  }
  absl::StatusOr<DatasetIo> io = storage_flags.BuildDatasetIo();
  if (!io.ok()) return flags.Fail(io.status());

  BlockTerminationSignals();  // Before any thread starts, so every thread inherits the mask.
  return Serve(config, *io, port_file, metrics_flags, argv);
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Run(argc, argv); }
