#ifndef STOKER_COORDINATOR_LEADERSHIP_H_
#define STOKER_COORDINATOR_LEADERSHIP_H_

// Whether this coordinator process may serve, and under which epoch (docs/architecture.md,
// "Replicated coordinators").
//
// With the file journal (or no store) a coordinator is alone: it always leads, epoch 0. With
// etcd (--state=etcd://...), replicas campaign for one leader key; the one holding it leads and
// its epoch is that key's create revision, which grows with every new leader. The server's glue
// asks view() on every call: a replica that does not lead answers UNAVAILABLE naming the leader
// (and health NOT_SERVING); a leader stamps its epoch on its responses, and workers and clients
// refuse a response of a lower epoch than one they have seen (a deposed leader that wakes up
// cannot hand out work).

#include <cstdint>
#include <string>

namespace stoker {

struct LeaderView {
  // This process may serve now.
  bool leading = true;
  // The epoch it serves under; 0 when there is no election (one coordinator).
  uint64_t epoch = 0;
  // When not leading: host:port of the leader clients should call, empty when unknown (an
  // election under way).
  std::string leader_address;
};

// Thread-safe.
class Leadership {
 public:
  virtual ~Leadership() = default;
  virtual LeaderView view() const = 0;
};

// The leadership of a coordinator that is alone: always leading, epoch 0. Never destroyed.
Leadership* SoleLeadership();

}  // namespace stoker

#endif  // STOKER_COORDINATOR_LEADERSHIP_H_
