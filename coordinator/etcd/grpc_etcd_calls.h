#ifndef STOKER_COORDINATOR_ETCD_GRPC_ETCD_CALLS_H_
#define STOKER_COORDINATOR_ETCD_GRPC_ETCD_CALLS_H_

// Pieces the gRPC EtcdClient (grpc_etcd_client.cc) and its watch streams (grpc_etcd_watch.cc)
// share. gRPC glue: included by those two files only.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/etcd/etcd_client.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"

namespace stoker {

// The calls in flight, so that Shutdown can cancel them all. Shared (shared_ptr) by the client
// and the watches it made, which may outlive it. Thread-safe.
class EtcdCallRegistry {
 public:
  // False (the call must not start) after Shutdown.
  bool Add(grpc::ClientContext* context);
  void Remove(grpc::ClientContext* context);
  void Shutdown();
  bool shut_down() const;

 private:
  mutable absl::Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  std::set<grpc::ClientContext*> contexts_ ABSL_GUARDED_BY(mu_);
};

// `status` of a call to `endpoint` with etcd's error contract (etcd_client.h): the code from the
// message where etcd's own code is not the contract's, the message prefixed "etcd ENDPOINT: ".
absl::Status EtcdCallError(const grpc::Status& status, const std::string& endpoint);

// Opens a watch stream on `stub` (a member at `endpoint`) and waits up to `timeout` for etcd to
// confirm the watch was created.
absl::StatusOr<std::unique_ptr<EtcdWatch>> OpenGrpcEtcdWatch(
    etcdserverpb::Watch::Stub* stub, const std::string& endpoint,
    const etcdserverpb::WatchCreateRequest& request, absl::Duration timeout,
    std::shared_ptr<EtcdCallRegistry> registry);

}  // namespace stoker

#endif  // STOKER_COORDINATOR_ETCD_GRPC_ETCD_CALLS_H_
