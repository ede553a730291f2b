#include "coordinator/etcd/etcd_replication.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "coordinator/etcd/grpc_etcd_client.h"

namespace stoker {

absl::StatusOr<std::unique_ptr<EtcdReplication>> EtcdReplication::Connect(
    const CoordinatorConfig& config, Clock* clock) {
  ASSIGN_OR_RETURN(EtcdTarget target, ParseEtcdTarget(config.state, "state"));
  const EtcdTls tls{config.etcd_ca_file, config.etcd_cert_file, config.etcd_key_file};
  // Each try of a call stays well inside the lease, so that a renewal that found one member
  // dead has time to reach another before the lease runs out.
  ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> client,
                   NewGrpcEtcdClient(target, tls, config.leader_lease_ttl / 2));
  return std::unique_ptr<EtcdReplication>(
      new EtcdReplication(config.leader_lease_ttl, clock, std::move(target), std::move(client)));
}

EtcdReplication::EtcdReplication(absl::Duration lease_ttl, Clock* clock, EtcdTarget target,
                                 std::unique_ptr<EtcdClient> client)
    : lease_ttl_(lease_ttl),
      clock_(clock),
      target_(std::move(target)),
      client_(std::move(client)),
      store_(client_.get(), target_.prefix, clock) {}

EtcdReplication::~EtcdReplication() {
  Stop();
  client_->Shutdown();
}

absl::Status EtcdReplication::Start(Coordinator* coordinator, const std::string& self,
                                    std::function<void(const absl::Status&)> on_deposed,
                                    bool wait_for_etcd) {
  election_ = std::make_unique<LeaderElection>(client_.get(), target_.prefix + kLeaderKey, self,
                                               lease_ttl_, clock_);
  auto replica = std::make_unique<CoordinatorReplica>(coordinator, &store_, election_.get(),
                                                      std::move(on_deposed));
  if (absl::Status started = replica->Start(wait_for_etcd); !started.ok()) {
    return absl::Status(started.code(),
                        absl::StrCat("loading the coordinator's state from etcd (--state=etcd://",
                                     absl::StrJoin(target_.endpoints, ","), target_.prefix,
                                     "): ", started.message()));
  }
  absl::MutexLock lock(&mu_);
  replica_ = std::move(replica);
  return absl::OkStatus();
}

LeaderView EtcdReplication::view() const {
  absl::MutexLock lock(&mu_);
  if (replica_ == nullptr) return LeaderView{false, 0, ""};
  return replica_->view();
}

void EtcdReplication::Stop() {
  absl::MutexLock lock(&mu_);
  if (replica_ != nullptr) replica_->Stop();
}

}  // namespace stoker
