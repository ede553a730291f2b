#include "tests/testing/etcd_cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "coordinator/etcd/grpc_etcd_client.h"

extern char** environ;

namespace stoker {
namespace testing {
namespace {

constexpr char kEtcd[] = "/usr/bin/etcd";
// Short raft timers so that an election after a killed member takes well under a second; etcd's
// shortest lease TTL follows them (1.5 election timeouts), which stays under the tests' 1-2 s.
constexpr int kHeartbeatMs = 50;
constexpr int kElectionMs = 500;

std::string PeerUrl(int port) { return absl::StrCat("http://127.0.0.1:", port); }

}  // namespace

absl::StatusOr<std::unique_ptr<EtcdCluster>> EtcdCluster::Start(const EtcdClusterOptions& options) {
  if (::access(kEtcd, X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        kEtcd, " is missing: the etcd tests need a real etcd (scripts/install-deps.sh --etcd)"));
  }
  if (options.members != 1 && options.members != 3) {
    return absl::InvalidArgumentError("EtcdClusterOptions.members: want 1 or 3");
  }
  std::unique_ptr<EtcdCluster> cluster(new EtcdCluster());
  cluster->options_ = options;
  std::vector<std::string> peers;
  for (int i = 0; i < options.members; ++i) {
    Member member;
    member.name = absl::StrCat("m", i);
    member.client_port = FreeLoopbackPort();
    member.peer_port = FreeLoopbackPort();
    peers.push_back(absl::StrCat(member.name, "=", PeerUrl(member.peer_port)));
    cluster->members_.push_back(std::move(member));
  }
  cluster->initial_cluster_ = absl::StrJoin(peers, ",");
  for (int i = 0; i < options.members; ++i) {
    if (absl::Status spawned = cluster->Spawn(i); !spawned.ok()) return spawned;
  }
  for (int i = 0; i < options.members; ++i) {
    if (absl::Status answered = cluster->AwaitAnswer(i); !answered.ok()) return answered;
  }
  return cluster;
}

EtcdCluster::~EtcdCluster() {
  for (Member& member : members_) {
    if (member.pid <= 0) continue;
    ::kill(member.pid, SIGKILL);
    ::waitpid(member.pid, nullptr, 0);
  }
}

std::vector<std::string> EtcdCluster::endpoints() const {
  std::vector<std::string> endpoints;
  for (int i = 0; i < size(); ++i) endpoints.push_back(endpoint(i));
  return endpoints;
}

std::string EtcdCluster::endpoint(int i) const {
  return absl::StrCat("127.0.0.1:", members_[i].client_port);
}

std::string EtcdCluster::Log(int i) const {
  const std::string log = ReadFile(dir_.File(members_[i].name + ".log"));
  return log.size() > 4000 ? log.substr(log.size() - 4000) : log;
}

absl::Status EtcdCluster::Spawn(int i) {
  Member& member = members_[i];
  const std::string client_url = PeerUrl(member.client_port);
  const std::string peer_url = PeerUrl(member.peer_port);
  std::vector<std::string> args = {
      kEtcd,
      "--name=" + member.name,
      "--data-dir=" + dir_.File(member.name + ".data"),
      "--listen-client-urls=" + client_url,
      "--advertise-client-urls=" + client_url,
      "--listen-peer-urls=" + peer_url,
      "--initial-advertise-peer-urls=" + peer_url,
      "--initial-cluster=" + initial_cluster_,
      "--initial-cluster-state=new",
      "--initial-cluster-token=" + dir_.path(),
      absl::StrCat("--heartbeat-interval=", kHeartbeatMs),
      absl::StrCat("--election-timeout=", kElectionMs),
      absl::StrCat("--quota-backend-bytes=", options_.quota_backend_bytes),
      "--logger=zap",
      "--log-outputs=stderr",
      "--log-level=warn"};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string log = dir_.File(member.name + ".log");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  const int spawned = ::posix_spawn(&member.pid, kEtcd, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    member.pid = -1;
    return absl::UnavailableError(absl::StrCat("cannot start ", kEtcd, " for ", member.name));
  }
  member.paused = false;
  return absl::OkStatus();
}

absl::Status EtcdCluster::AwaitAnswer(int i) {
  Member& member = members_[i];
  Clock* const clock = Clock::Real();
  const absl::Time deadline = clock->Now() + absl::Seconds(30);
  absl::Status last;
  while (clock->Now() < deadline) {
    if (::waitpid(member.pid, nullptr, WNOHANG) != 0) {
      member.pid = -1;
      return absl::UnavailableError(
          absl::StrCat("etcd member ", member.name, " exited:\n", Log(i)));
    }
    // A fresh channel each time: one that connected while etcd was starting can wait seconds
    // for etcd's HTTP/2 settings.
    absl::StatusOr<std::unique_ptr<EtcdClient>> client =
        NewGrpcEtcdClient(EtcdTarget{{endpoint(i)}, "/"}, EtcdTls{}, absl::Seconds(1));
    if (!client.ok()) return client.status();
    absl::StatusOr<etcdserverpb::StatusResponse> status = (*client)->Status();
    if (status.ok() && status->leader() != 0) {
      member.id = status->header().member_id();
      return absl::OkStatus();
    }
    last = status.ok() ? absl::UnavailableError("no leader yet") : status.status();
    clock->SleepFor(absl::Milliseconds(50));
  }
  return absl::UnavailableError(absl::StrCat("etcd member ", member.name,
                                             " did not answer within 30 s (", last.message(),
                                             "):\n", Log(i)));
}

absl::Status EtcdCluster::Kill(int i) {
  Member& member = members_[i];
  if (member.pid <= 0) return absl::FailedPreconditionError(member.name + " is not running");
  ::kill(member.pid, SIGKILL);
  ::waitpid(member.pid, nullptr, 0);
  member.pid = -1;
  return absl::OkStatus();
}

absl::Status EtcdCluster::Stop(int i) {
  Member& member = members_[i];
  if (member.pid <= 0) return absl::FailedPreconditionError(member.name + " is not running");
  ::kill(member.pid, SIGSTOP);
  member.paused = true;
  return absl::OkStatus();
}

absl::Status EtcdCluster::Resume(int i) {
  Member& member = members_[i];
  if (member.pid <= 0) return absl::FailedPreconditionError(member.name + " is not running");
  ::kill(member.pid, SIGCONT);
  member.paused = false;
  return absl::OkStatus();
}

absl::Status EtcdCluster::Restart(int i) {
  if (members_[i].pid > 0) {
    return absl::FailedPreconditionError(members_[i].name + " is running: Kill it first");
  }
  if (absl::Status spawned = Spawn(i); !spawned.ok()) return spawned;
  return AwaitAnswer(i);
}

absl::StatusOr<int> EtcdCluster::LeaderIndex() const {
  Clock* const clock = Clock::Real();
  const absl::Time deadline = clock->Now() + absl::Seconds(10);
  while (clock->Now() < deadline) {
    for (int i = 0; i < size(); ++i) {
      if (members_[i].pid <= 0 || members_[i].paused) continue;
      absl::StatusOr<std::unique_ptr<EtcdClient>> client =
          NewGrpcEtcdClient(EtcdTarget{{endpoint(i)}, "/"}, EtcdTls{}, absl::Seconds(1));
      if (!client.ok()) return client.status();
      absl::StatusOr<etcdserverpb::StatusResponse> status = (*client)->Status();
      if (!status.ok() || status->leader() == 0) continue;
      for (int j = 0; j < size(); ++j) {
        if (members_[j].id == status->leader() && members_[j].pid > 0 && !members_[j].paused) {
          return j;
        }
      }
    }
    clock->SleepFor(absl::Milliseconds(50));
  }
  return absl::UnavailableError("no running etcd member knows a running leader within 10 s");
}

}  // namespace testing
}  // namespace stoker
