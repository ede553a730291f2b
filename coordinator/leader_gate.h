#ifndef STOKER_COORDINATOR_LEADER_GATE_H_
#define STOKER_COORDINATOR_LEADER_GATE_H_

// gRPC glue: whether this coordinator replica may answer a call
// (docs/decisions/0075-follow-the-leader.md). The Coordinator and KEDA scaler services ask it
// before touching the logic: a leader gets the epoch to stamp on its response; a standby answers
// UNAVAILABLE naming itself and the leader, with the leader's address in trailing metadata
// kLeaderMetadata when one is known, so that clients given every replica's address move there.

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/leadership.h"

namespace stoker {

// Thread-safe. Does not own `leadership`, which must outlive it.
class LeaderGate {
 public:
  static constexpr char kLeaderMetadata[] = "stoker-leader";

  // `self`: the address this replica names itself by in a standby's answer.
  LeaderGate(Leadership* leadership, std::string self)
      : leadership_(leadership), self_(std::move(self)) {}

  // Once the port is bound (the listen address may have said port 0).
  void SetSelf(std::string self) {
    absl::MutexLock lock(&mu_);
    self_ = std::move(self);
  }

  Leadership* leadership() const { return leadership_; }

  // The epoch to stamp when this replica leads; else UNAVAILABLE "coordinator <self> is a
  // standby; the leader is <address>" (or "; no leader is elected yet"), the address also in
  // `context`'s trailing metadata.
  absl::StatusOr<uint64_t> Check(grpc::ServerContextBase* context) const;

 private:
  Leadership* const leadership_;
  mutable absl::Mutex mu_;
  std::string self_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_LEADER_GATE_H_
