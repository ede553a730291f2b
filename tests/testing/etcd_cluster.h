#ifndef STOKER_TESTS_TESTING_ETCD_CLUSTER_H_
#define STOKER_TESTS_TESTING_ETCD_CLUSTER_H_

// A real etcd cluster on loopback for tests (never a fake): N members (1 or 3) of /usr/bin/etcd,
// each with free client and peer ports and a data directory in a private temporary directory,
// with short heartbeat and election timeouts. Start waits (bounded) until every member answers
// and the cluster has a leader. Members can be killed (SIGKILL), paused (SIGSTOP) and resumed,
// and restarted on their data. The destructor kills and reaps every process it started, so a
// failing test leaves none behind. tests/chaos/etcd_harness.py is the same for Python tests.
//
//   absl::StatusOr<std::unique_ptr<EtcdCluster>> etcd = EtcdCluster::Start({.members = 3});
//   EtcdTarget target{(*etcd)->endpoints(), "/test/"};

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "data/testing/shard_fixtures.h"

namespace stoker {
namespace testing {

struct EtcdClusterOptions {
  int members = 3;
  // etcd's --quota-backend-bytes (0: etcd's default of 2 GiB); a small one makes NOSPACE easy.
  int64_t quota_backend_bytes = 0;
};

// Not thread-safe: drive it from the test's thread.
class EtcdCluster {
 public:
  // FAILED_PRECONDITION naming scripts/install-deps.sh --etcd when /usr/bin/etcd is missing;
  // UNAVAILABLE (with the members' logs) when the cluster does not answer within 30 s.
  static absl::StatusOr<std::unique_ptr<EtcdCluster>> Start(const EtcdClusterOptions& options);
  ~EtcdCluster();

  // "127.0.0.1:PORT" of each member's client URL, in member order.
  std::vector<std::string> endpoints() const;
  std::string endpoint(int i) const;
  int size() const { return static_cast<int>(members_.size()); }

  absl::Status Kill(int i);    // SIGKILL and reap
  absl::Status Stop(int i);    // SIGSTOP
  absl::Status Resume(int i);  // SIGCONT
  // Starts a killed member again on its data directory and ports; waits until it answers.
  absl::Status Restart(int i);
  // The member etcd's raft elected (asked of the running members); UNAVAILABLE when none
  // knows one within 10 s.
  absl::StatusOr<int> LeaderIndex() const;

  // The last lines of member i's log, for failure messages.
  std::string Log(int i) const;

 private:
  struct Member {
    std::string name;
    int client_port = 0;
    int peer_port = 0;
    uint64_t id = 0;  // etcd's member id, learnt when it first answers
    pid_t pid = -1;
    bool paused = false;
  };

  EtcdCluster() = default;
  absl::Status Spawn(int i);
  // Waits until member i answers Status (and knows a leader); records its id.
  absl::Status AwaitAnswer(int i);

  EtcdClusterOptions options_;
  TempDir dir_;
  std::string initial_cluster_;
  std::vector<Member> members_;
};

}  // namespace testing
}  // namespace stoker

#endif  // STOKER_TESTS_TESTING_ETCD_CLUSTER_H_
