#ifndef STOKER_COORDINATOR_ETCD_GRPC_ETCD_CLIENT_H_
#define STOKER_COORDINATOR_ETCD_GRPC_ETCD_CLIENT_H_

// The gRPC implementation of EtcdClient (etcd_client.h). One channel per member. A unary call
// goes to the member that answered last; UNAVAILABLE from it moves on to the next, each member
// at most once per call, each try under `rpc_timeout`. A try that times out is returned (a write
// may have been applied) but the next call starts at the next member, so a paused member costs
// one timeout, not every call. Lease renewals share one kept bidi stream (re-opened on another
// member when it breaks or a renewal outlives `rpc_timeout`); each Watch is a bidi stream read by
// its own thread into a bounded queue.

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/etcd/etcd_client.h"

namespace stoker {

// INVALID_ARGUMENT naming the flag (--etcd-ca, --etcd-cert, --etcd-key) when a TLS file cannot
// be read, or when only one of the client certificate and key is given.
absl::StatusOr<std::unique_ptr<EtcdClient>> NewGrpcEtcdClient(const EtcdTarget& target,
                                                              const EtcdTls& tls,
                                                              absl::Duration rpc_timeout);

}  // namespace stoker

#endif  // STOKER_COORDINATOR_ETCD_GRPC_ETCD_CLIENT_H_
