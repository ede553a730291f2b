#ifndef STOKER_COORDINATOR_ETCD_ETCD_CLIENT_H_
#define STOKER_COORDINATOR_ETCD_ETCD_CLIENT_H_

// EtcdClient: the calls the coordinator makes to etcd's v3 API (proto/etcd, vendored), behind
// an interface that its logic sees (never gRPC). One implementation talks gRPC to a cluster's
// members (grpc_etcd_client.h); tests run it against real etcd processes on loopback
// (tests/testing/etcd_cluster.h), never against a fake.
//
// Requests and responses are etcd's own messages, so every option of etcd's API stays within
// reach (compares, revisions, prev_kv, ...). Errors carry etcd's status code and start with
// "etcd <endpoint>: ":
//   UNAVAILABLE        no member answered (each endpoint was tried), or the member lost its
//                      leader mid-call: retry.
//   DEADLINE_EXCEEDED  the call outlived its deadline: retry.
//   RESOURCE_EXHAUSTED etcd's backend quota is full ("mvcc: database space exceeded", the
//                      NOSPACE alarm), or a request over etcd's size limit.
//   OUT_OF_RANGE       a revision compacted away ("required revision has been compacted").
//   NOT_FOUND          a lease that expired or was revoked ("requested lease not found").
//   INVALID_ARGUMENT   a request etcd refuses (too many operations in a transaction, ...).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "etcd/etcdserver/etcdserverpb/rpc.pb.h"

namespace stoker {

// Where a coordinator's state lives in etcd: `--state=etcd://HOST:PORT[,HOST:PORT...]/PREFIX`.
struct EtcdTarget {
  std::vector<std::string> endpoints;  // host:port of the members, in the order given
  std::string prefix;  // every key the coordinator writes starts with it; ends in '/'
};

// Parses "etcd://HOST:PORT[,HOST:PORT...]/PREFIX" (PREFIX non-empty, without a trailing '/'
// needed: "/stoker" and "/stoker/" are the same prefix "/stoker/"). INVALID_ARGUMENT naming
// `field` and what is wrong: another scheme, no endpoint, an endpoint without a port, an empty
// prefix.
absl::StatusOr<EtcdTarget> ParseEtcdTarget(absl::string_view spec, absl::string_view field);

// etcd's client TLS (--etcd-ca, --etcd-cert, --etcd-key). All empty: plaintext, for loopback
// tests and the demo; a CA without a client pair: server-authenticated TLS.
struct EtcdTls {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

// One watch stream (Watch below). Thread-compatible: one reader.
class EtcdWatch {
 public:
  virtual ~EtcdWatch() = default;
  // The next response: events in revision order, or a notice (compact_revision set: the start
  // revision was compacted, OUT_OF_RANGE is returned instead; canceled). DEADLINE_EXCEEDED when
  // nothing came within `timeout`; UNAVAILABLE when the stream broke (watch again from the
  // revision after the last event seen); CANCELLED after Cancel.
  virtual absl::StatusOr<etcdserverpb::WatchResponse> Next(absl::Duration timeout) = 0;
  // Ends the stream; a Next blocked in another thread returns CANCELLED. Idempotent.
  virtual void Cancel() = 0;
};

// Thread-safe: calls may be made concurrently from any thread.
class EtcdClient {
 public:
  virtual ~EtcdClient() = default;

  // KV.
  virtual absl::StatusOr<etcdserverpb::RangeResponse> Range(
      const etcdserverpb::RangeRequest& request) = 0;
  virtual absl::StatusOr<etcdserverpb::TxnResponse> Txn(
      const etcdserverpb::TxnRequest& request) = 0;
  virtual absl::StatusOr<etcdserverpb::CompactionResponse> Compact(
      const etcdserverpb::CompactionRequest& request) = 0;

  // Leases. KeepAlive sends one renewal on a kept stream and returns etcd's answer (TTL 0:
  // the lease is gone).
  virtual absl::StatusOr<etcdserverpb::LeaseGrantResponse> LeaseGrant(
      const etcdserverpb::LeaseGrantRequest& request) = 0;
  virtual absl::StatusOr<etcdserverpb::LeaseKeepAliveResponse> LeaseKeepAlive(int64_t lease_id) = 0;
  virtual absl::StatusOr<etcdserverpb::LeaseRevokeResponse> LeaseRevoke(
      const etcdserverpb::LeaseRevokeRequest& request) = 0;

  // A watch stream of one create request.
  virtual absl::StatusOr<std::unique_ptr<EtcdWatch>> Watch(
      const etcdserverpb::WatchCreateRequest& request) = 0;

  // Maintenance: the cluster's alarms (NOSPACE once the backend quota is full) and the
  // answering member's status (db size, leader, raft index).
  virtual absl::StatusOr<etcdserverpb::AlarmResponse> Alarm(
      const etcdserverpb::AlarmRequest& request) = 0;
  virtual absl::StatusOr<etcdserverpb::StatusResponse> Status() = 0;

  // Cancels calls in flight and fails later ones with CANCELLED.
  virtual void Shutdown() = 0;
};

// The key range [prefix, end) of every key that starts with `prefix` (etcd's range_end for a
// prefix: the prefix with its last byte incremented).
std::string EtcdPrefixEnd(absl::string_view prefix);

}  // namespace stoker

#endif  // STOKER_COORDINATOR_ETCD_ETCD_CLIENT_H_
