#include "coordinator/coordinator_server.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_settings.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "common/tls/bearer_tokens.h"
#include "common/tls/grpc_tls.h"
#include "coordinator/coordinator_service.h"
#include "coordinator/etcd/etcd_replication.h"
#include "coordinator/external_scaler_service.h"
#include "coordinator/journal.h"
#include "coordinator/leader_gate.h"
#include "coordinator/tenant_policy.h"

namespace stoker {
namespace {

// How long Stop lets in-flight calls finish before cancelling them.
constexpr absl::Duration kShutdownGrace = absl::Seconds(3);

// "host:port" → host, with wildcard hosts replaced by loopback.
std::string DialHost(const std::string& listen_address) {
  std::string host = listen_address.substr(0, listen_address.rfind(':'));
  if (host.empty() || host == "0.0.0.0" || host == "[::]" || host == "::") return "127.0.0.1";
  return host;
}

}  // namespace

struct CoordinatorServer::Impl {
  Impl(const CoordinatorConfig& config, DatasetIo io, Clock* clock, JournalEnv* journal_env,
       Leadership* leadership, std::unique_ptr<EtcdReplication> etcd)
      : replication(std::move(etcd)),
        leader(replication != nullptr ? replication.get() : leadership,
               config.advertise_address.empty() ? config.listen_address : config.advertise_address),
        store(config.journal_path.empty()
                  ? nullptr
                  : std::make_unique<FileJournal>(config.journal_path, journal_env, clock)),
        coordinator(config, clock, replication != nullptr ? replication->store() : store.get(),
                    SourceFactoryFor(std::move(io))),
        service(&coordinator, &latencies, config.tls, clock, &leader,
                replication != nullptr ? CoordinatorService::kEtcdCallThreads
                                       : CoordinatorService::kCallThreads),
        decider(config.scaler, clock),
        scaler_service(&coordinator, &decider, config.tls, config.max_job_name_bytes, &leader) {
    if (!config.tenant_policy_path.empty()) {
      policy_file.emplace("tenant_policy_path", config.tenant_policy_path);
      RefreshTenantPolicy();
    }
  }

  // A changed tenant policy file takes effect (one that does not load is logged and ignored);
  // true when it did.
  bool RefreshTenantPolicy() {
    if (!policy_file.has_value()) return false;
    std::optional<TenantPolicy> policy = policy_file->Refresh();
    if (!policy.has_value()) return false;
    coordinator.SetTenantPolicy(std::make_shared<const TenantPolicy>(*std::move(policy)));
    STOKER_LOG(INFO) << "tenant policy loaded: " << policy_file->path();
    return true;
  }

  // max_bearer_tokens: INVALID_ARGUMENT naming the tenant when --accept-bearer-tokens-file
  // lists more of its tokens than the policy in force allows. The tokens are the operator's:
  // the quota catches a file that grew past what the platform agreed with a team.
  absl::Status CheckBearerTokenQuota() {
    const std::string& path = coordinator.config().tls.accept_bearer_tokens_file;
    if (!policy_file.has_value() || path.empty()) return absl::OkStatus();
    constexpr absl::string_view kField = "--accept-bearer-tokens-file";
    ASSIGN_OR_RETURN(const std::vector<BearerToken> tokens, ReadBearerTokens(kField, path));
    return CheckBearerTokenQuotas(kField, *coordinator.tenant_policy(), tokens);
  }

  // Wakes every heartbeat_interval (real time) until Stop: liveness, and the dataset probes of
  // recovered jobs.
  void LivenessLoop() {
    const absl::Duration interval = coordinator.config().heartbeat_interval;
    absl::MutexLock lock(&mu);
    while (!stopping) {
      mu.AwaitWithTimeout(absl::Condition(&stopping), interval);
      if (stopping) break;
      mu.Unlock();
      // A standby's state is the leader's: it removes no worker and probes nothing itself.
      if (leader.leadership()->view().leading) {
        coordinator.CheckLiveness();
        coordinator.ProbeDatasets();  // dataset I/O: here, never on a gRPC callback thread
      }
      if (RefreshTenantPolicy()) {
        // The tokens stay accepted (refusing them now would cut off running trainers).
        if (absl::Status quota = CheckBearerTokenQuota(); !quota.ok()) {
          STOKER_LOG(ERROR) << quota;
        }
      }
      ReportStoreFailure();
      mu.Lock();
    }
  }

  // NOT_SERVING once the journal failed: the coordinator takes no more changes, and the probes
  // restart it (a restart replays the journal to its last whole record).
  void ReportStoreFailure() {
    if (store_failed.load()) return;
    const absl::Status usable = coordinator.StoreUsable();
    if (usable.ok()) return;
    store_failed.store(true);
    STOKER_LOG(ERROR) << usable.message() << "; health is NOT_SERVING from now on";
    UpdateHealth();
  }

  // SERVING while this replica leads and its store works; a change is logged.
  void UpdateHealth() {
    const bool leading = leader.leadership()->view().leading;
    const bool serving = leading && !store_failed.load();
    absl::MutexLock lock(&health_mu);
    if (serving == health_serving) return;
    health_serving = serving;
    if (!store_failed.load()) {
      STOKER_LOG(INFO) << "coordinator " << (leading ? "leads" : "is a standby") << "; health is "
                       << (serving ? "SERVING" : "NOT_SERVING");
    }
    SetHealth(serving);
  }

  // For the server ("") and by name for stoker.v1.Coordinator, which probes may ask for.
  void SetHealth(bool serving) {
    if (grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService()) {
      health->SetServingStatus(stoker::v1::Coordinator::service_full_name(), serving);
      health->SetServingStatus(serving);
    }
  }

  // Health follows the leadership every kLeadershipPoll until Stop.
  void LeadershipLoop() {
    absl::MutexLock lock(&mu);
    while (!stopping) {
      mu.Unlock();
      UpdateHealth();
      mu.Lock();
      mu.AwaitWithTimeout(absl::Condition(&stopping), kLeadershipPoll);
    }
  }

  std::unique_ptr<EtcdReplication> replication;  // with config.state
  LeaderGate leader;
  std::unique_ptr<StateStore> store;  // the file journal (config.journal_path)
  Coordinator coordinator;
  CallLatencies latencies;
  CoordinatorService service;
  ScaleDecider decider;
  ExternalScalerService scaler_service;         // KEDA's external scaler
  std::optional<TenantPolicyFile> policy_file;  // with --tenant-policy
  std::unique_ptr<grpc::Server> server;
  std::thread liveness_thread;
  std::thread leadership_thread;  // not with SoleLeadership, which never changes
  int port = 0;
  std::string host;
  std::atomic<bool> store_failed{false};

  absl::Mutex health_mu;
  bool health_serving ABSL_GUARDED_BY(health_mu) = false;

  absl::Mutex mu;
  bool stopping ABSL_GUARDED_BY(mu) = false;
  bool stopped ABSL_GUARDED_BY(mu) = false;
};

absl::StatusOr<std::unique_ptr<CoordinatorServer>> CoordinatorServer::Start(
    const CoordinatorConfig& config, DatasetIo io, Clock* clock, JournalEnv* journal_env,
    Leadership* leadership, std::function<void(const absl::Status&)> on_deposed) {
  RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<EtcdReplication> replication;
  if (!config.state.empty()) {
    ASSIGN_OR_RETURN(replication, EtcdReplication::Connect(config, clock));
    leadership = replication.get();
  }
  auto impl = std::make_unique<Impl>(config, std::move(io), clock, journal_env, leadership,
                                     std::move(replication));
  RETURN_IF_ERROR(impl->CheckBearerTokenQuota());
  // A replica loads its state once it serves (as a standby), when it knows its own address.
  if (impl->replication == nullptr) RETURN_IF_ERROR(impl->coordinator.Recover());
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  // Without this gRPC sets SO_REUSEPORT, and a second coordinator on a busy port would start
  // and split the traffic instead of failing.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  WarnIfInsecure(config.tls, "coordinator");
  builder.AddListeningPort(config.listen_address, ServerCredentials(config.tls), &impl->port);
  ApplyServerKeepalive(&builder);
  ApplyServerLimits(&builder, static_cast<int>(config.max_request_bytes),
                    static_cast<int>(config.max_calls_per_connection), config.grpc_memory_bytes);
  builder.RegisterService(&impl->service);
  builder.RegisterService(&impl->scaler_service);
  impl->server = builder.BuildAndStart();
  if (impl->server == nullptr || impl->port == 0) {
    return absl::UnavailableError(absl::StrCat("coordinator: cannot listen on ",
                                               config.listen_address,
                                               " (address in use or not local?)"));
  }
  impl->host = DialHost(config.listen_address);
  const std::string self = config.advertise_address.empty()
                               ? absl::StrCat(impl->host, ":", impl->port)
                               : config.advertise_address;
  impl->leader.SetSelf(self);
  if (impl->replication != nullptr) {
    if (!on_deposed) {
      on_deposed = [](const absl::Status&) {
        STOKER_LOG(ERROR) << "this replica no longer serves; restart it to stand by again";
      };
    }
    RETURN_IF_ERROR(impl->replication->Start(&impl->coordinator, self, std::move(on_deposed),
                                             config.wait_for_state));
  }
  // gRPC starts its health service SERVING: a standby must not say so even briefly.
  impl->SetHealth(false);
  impl->UpdateHealth();
  impl->liveness_thread = std::thread([raw = impl.get()] { raw->LivenessLoop(); });
  if (leadership != SoleLeadership()) {
    impl->leadership_thread = std::thread([raw = impl.get()] { raw->LeadershipLoop(); });
  }
  STOKER_LOG(INFO) << "coordinator serving on " << config.listen_address << " (port " << impl->port
                   << ")";
  return std::unique_ptr<CoordinatorServer>(new CoordinatorServer(std::move(impl)));
}

CoordinatorServer::CoordinatorServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CoordinatorServer::~CoordinatorServer() { Stop(); }

int CoordinatorServer::port() const { return impl_->port; }

std::string CoordinatorServer::address() const {
  return absl::StrCat(impl_->host, ":", impl_->port);
}

Coordinator* CoordinatorServer::coordinator() { return &impl_->coordinator; }

bool CoordinatorServer::leading() const { return leadership()->view().leading; }

const Leadership* CoordinatorServer::leadership() const { return impl_->leader.leadership(); }

const CallLatencies* CoordinatorServer::call_latencies() const { return &impl_->latencies; }

void CoordinatorServer::Stop() {
  {
    absl::MutexLock lock(&impl_->mu);
    if (impl_->stopped) return;
    impl_->stopped = true;
    impl_->stopping = true;
  }
  // Joined first: it would otherwise set health back to SERVING.
  if (impl_->leadership_thread.joinable()) impl_->leadership_thread.join();
  impl_->SetHealth(false);
  impl_->scaler_service.Stop();  // ends KEDA's streams, which Shutdown would wait for
  impl_->server->Shutdown(std::chrono::system_clock::now() +
                          absl::ToChronoMilliseconds(kShutdownGrace));
  impl_->server->Wait();
  impl_->service.Stop();
  if (impl_->liveness_thread.joinable()) impl_->liveness_thread.join();
  // Every RPC syncs before replying; this covers anything added after the last one.
  if (impl_->store != nullptr) {
    if (absl::Status status = impl_->store->Sync(impl_->store->last_added()); !status.ok()) {
      STOKER_LOG(ERROR) << "flushing the journal: " << status;
    }
  }
  if (impl_->replication != nullptr) impl_->replication->Stop();  // resigns: a standby leads
}

}  // namespace stoker
