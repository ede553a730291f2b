// Replicated coordinators on real etcd (coordinator/etcd/coordinator_replica.h): two
// CoordinatorServers started with config.state on a 3-member etcd cluster on loopback, a client
// given both addresses. What one leader made durable, the next one serves; a standby answers as
// one; a leader whose clock stopped is fenced by etcd and refused by clients; bad starts fail
// naming what is wrong.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "coordinator/coordinator_client.h"
#include "coordinator/coordinator_server.h"
#include "coordinator/etcd/etcd_store_codec.h"
#include "coordinator/etcd/grpc_etcd_client.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"
#include "tests/testing/etcd_cluster.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;
namespace pb = ::stoker::v1;

constexpr char kPrefix[] = "/replicated-test";

class ReplicatedCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto etcd = testing::EtcdCluster::Start({.members = 3});
    ASSERT_THAT(etcd, IsOk());
    etcd_ = *std::move(etcd);
  }

  CoordinatorConfig ConfigOn(const std::vector<std::string>& endpoints) const {
    CoordinatorConfig config;
    config.tls = TlsConfig::Plaintext();
    config.state = absl::StrCat("etcd://", absl::StrJoin(endpoints, ","), kPrefix);
    config.leader_lease_ttl = absl::Seconds(1);
    return config;
  }

  absl::StatusOr<std::unique_ptr<CoordinatorServer>> StartReplica(
      const CoordinatorConfig& config, absl::Notification* deposed = nullptr,
      Clock* clock = Clock::Real()) {
    return CoordinatorServer::Start(config, DatasetIo::FromEnvironment(), clock, PosixJournalEnv(),
                                    SoleLeadership(), [deposed](const absl::Status&) {
                                      if (deposed != nullptr && !deposed->HasBeenNotified()) {
                                        deposed->Notify();
                                      }
                                    });
  }

  // Waits (bounded) until one of `servers` answers as the leader through `client`; its index.
  static int AwaitLeader(CoordinatorClient* client,
                         const std::vector<CoordinatorServer*>& servers) {
    for (int attempt = 0; attempt < 300; ++attempt) {
      pb::GetStatusRequest request;
      if (client->GetStatus(request).ok()) {
        for (size_t i = 0; i < servers.size(); ++i) {
          if (servers[i] != nullptr && servers[i]->leading()) return static_cast<int>(i);
        }
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    return -1;
  }

  // A standby learns the leader from its watch on the leader key, a moment after the leader
  // itself knows; true once `standby` names `leader`.
  static bool AwaitStandbyNames(const CoordinatorServer& standby, const CoordinatorServer& leader) {
    for (int attempt = 0; attempt < 300; ++attempt) {
      if (standby.leadership()->view().leader_address == leader.address()) return true;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
  }

  std::unique_ptr<testing::EtcdCluster> etcd_;
};

pb::OpenJobRequest TrainJob() {
  pb::OpenJobRequest request;
  request.set_name("train");
  *request.mutable_spec() = SmallJobSpec();
  return request;
}

TEST_F(ReplicatedCoordinatorTest, TheNextLeaderServesWhatTheFirstMadeDurable) {
  auto first = StartReplica(ConfigOn(etcd_->endpoints()));
  ASSERT_THAT(first, IsOk());
  // The second starts once the first leads: a takeover snapshots and compacts etcd's history,
  // and a replica whose watch starts before that revision must load again (main.cc re-executes
  // it; this in-process test does not).
  {
    std::unique_ptr<CoordinatorClient> to_first =
        NewGrpcCoordinatorClient((*first)->address(), absl::Seconds(5), TlsConfig::Plaintext());
    ASSERT_EQ(AwaitLeader(to_first.get(), {first->get()}), 0);
  }
  auto second = StartReplica(ConfigOn(etcd_->endpoints()));
  ASSERT_THAT(second, IsOk());
  std::unique_ptr<CoordinatorClient> client =
      NewGrpcCoordinatorClient(absl::StrCat((*first)->address(), ",", (*second)->address()),
                               absl::Seconds(5), TlsConfig::Plaintext());
  const int leader = AwaitLeader(client.get(), {first->get(), second->get()});
  ASSERT_EQ(leader, 0);
  CoordinatorServer* leading = leader == 0 ? first->get() : second->get();
  CoordinatorServer* standing_by = leader == 0 ? second->get() : first->get();

  // The standby answers as one, naming the leader.
  ASSERT_TRUE(AwaitStandbyNames(*standing_by, *leading));
  std::unique_ptr<CoordinatorClient> to_standby =
      NewGrpcCoordinatorClient(standing_by->address(), absl::Seconds(5), TlsConfig::Plaintext());
  EXPECT_THAT(
      to_standby->OpenJob(TrainJob()),
      StatusIs(absl::StatusCode::kUnavailable,
               HasSubstr(absl::StrCat("is a standby; the leader is ", leading->address()))));

  // Open a job, register a worker, lease and consume one rank's first batch on the leader.
  absl::StatusOr<pb::OpenJobResponse> opened = client->OpenJob(TrainJob());
  ASSERT_THAT(opened, IsOk());
  const uint64_t first_epoch = opened->coordinator_epoch();
  EXPECT_GT(first_epoch, 0u);
  pb::RegisterWorkerRequest registration;
  registration.set_address("127.0.0.1:1");
  registration.set_cores(1);
  absl::StatusOr<pb::RegisterWorkerResponse> worker = client->RegisterWorker(registration);
  ASSERT_THAT(worker, IsOk());
  pb::LeaseTasksRequest lease;
  lease.set_worker_id(worker->worker_id());
  lease.set_job_id(opened->job_id());
  lease.set_rank(0);
  lease.set_max_tasks(1);
  absl::StatusOr<pb::LeaseTasksResponse> leased = client->LeaseTasks(lease);
  ASSERT_THAT(leased, IsOk());
  ASSERT_EQ(leased->leases_size(), 1);
  const pb::TaskId done = leased->leases(0).task();
  pb::ClientHeartbeatRequest heartbeat;
  heartbeat.set_job_id(opened->job_id());
  heartbeat.set_rank(0);
  heartbeat.set_client_id("trainer-0");
  *heartbeat.add_received() = done;
  ASSERT_THAT(client->ClientHeartbeat(heartbeat), IsOk());

  // The leader stops (resigning); the standby takes over with a higher epoch and the same job.
  leading->Stop();
  ASSERT_EQ(AwaitLeader(client.get(), {nullptr, standing_by}), 1);
  absl::StatusOr<pb::OpenJobResponse> again = client->OpenJob(TrainJob());
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->job_id(), opened->job_id());
  EXPECT_GT(again->coordinator_epoch(), first_epoch);
  // The worker is still registered (durable), and the consumed batch is never leased again.
  absl::StatusOr<pb::LeaseTasksResponse> rest = client->LeaseTasks([&] {
    pb::LeaseTasksRequest all = lease;
    all.set_max_tasks(1000);
    return all;
  }());
  ASSERT_THAT(rest, IsOk());
  ASSERT_GT(rest->leases_size(), 0);
  for (const pb::Lease& task : rest->leases()) {
    EXPECT_FALSE(task.task().epoch() == done.epoch() &&
                 task.task().batch_index() == done.batch_index())
        << "a consumed batch was leased again";
  }
}

// What a paused leader (SIGSTOP, a long GC-like stall) or one whose clock runs slow looks like
// from the inside: its clock stopped, so it neither renews its lease nor sees it lapse, and it
// still believes it leads. The local lease check cannot save it; the two fences must: etcd
// refuses its writes (they compare the leader key's create revision, now another's) and a
// client that has seen the newer leader refuses its older epoch.
TEST_F(ReplicatedCoordinatorTest, ALeaderWhoseClockStoppedIsFencedByEtcdAndRefusedByClients) {
  FakeClock stopped;
  absl::Notification old_deposed;
  auto old_leader = StartReplica(ConfigOn(etcd_->endpoints()), &old_deposed, &stopped);
  ASSERT_THAT(old_leader, IsOk());
  std::unique_ptr<CoordinatorClient> to_old =
      NewGrpcCoordinatorClient((*old_leader)->address(), absl::Seconds(5), TlsConfig::Plaintext());
  ASSERT_EQ(AwaitLeader(to_old.get(), {old_leader->get()}), 0);
  absl::StatusOr<pb::GetStatusResponse> old_status = to_old->GetStatus(pb::GetStatusRequest());
  ASSERT_THAT(old_status, IsOk());
  const uint64_t old_epoch = old_status->coordinator_epoch();

  // Its lease lapses in etcd (never renewed); the second replica takes over.
  auto new_leader = StartReplica(ConfigOn(etcd_->endpoints()));
  ASSERT_THAT(new_leader, IsOk());
  std::unique_ptr<CoordinatorClient> to_new =
      NewGrpcCoordinatorClient((*new_leader)->address(), absl::Seconds(5), TlsConfig::Plaintext());
  ASSERT_EQ(AwaitLeader(to_new.get(), {new_leader->get()}), 0);
  // Made now, its first call goes to the new leader (the first address).
  std::unique_ptr<CoordinatorClient> client = NewGrpcCoordinatorClient(
      absl::StrCat((*new_leader)->address(), ",", (*old_leader)->address()), absl::Seconds(5),
      TlsConfig::Plaintext());
  ASSERT_TRUE((*old_leader)->leading()) << "the premise: the stopped clock still says leading";
  absl::StatusOr<pb::GetStatusResponse> new_status = client->GetStatus(pb::GetStatusRequest());
  ASSERT_THAT(new_status, IsOk());
  ASSERT_GT(new_status->coordinator_epoch(), old_epoch);

  // A client that has seen the new epoch refuses the old leader's answer: the new leader resigns,
  // the client moves on to the old one, which answers under its old epoch.
  (*new_leader)->Stop();
  EXPECT_THAT(client->GetStatus(pb::GetStatusRequest()),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr(absl::StrCat("epoch ", old_epoch, " is older than epoch ",
                                              new_status->coordinator_epoch()))));
  EXPECT_EQ(client->stale_epoch_responses(), 1u);

  // Its first write is refused by etcd, and it steps down.
  EXPECT_THAT(to_old->OpenJob(TrainJob()),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("FAILED_PRECONDITION")));
  EXPECT_TRUE(old_deposed.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE((*old_leader)->leading());

  // Nothing it tried to write is in etcd: a new leader has no job.
  auto next = StartReplica(ConfigOn(etcd_->endpoints()));
  ASSERT_THAT(next, IsOk());
  std::unique_ptr<CoordinatorClient> to_next =
      NewGrpcCoordinatorClient((*next)->address(), absl::Seconds(5), TlsConfig::Plaintext());
  ASSERT_EQ(AwaitLeader(to_next.get(), {next->get()}), 0);
  absl::StatusOr<pb::GetStatusResponse> after = to_next->GetStatus(pb::GetStatusRequest());
  ASSERT_THAT(after, IsOk());
  EXPECT_EQ(after->jobs_size(), 0);
}

TEST_F(ReplicatedCoordinatorTest, EtcdUnreachableAtStartNamesTheEndpoint) {
  const std::string nobody = absl::StrCat("127.0.0.1:", testing::FreeLoopbackPort());
  auto server = StartReplica(ConfigOn({nobody}));
  EXPECT_THAT(server, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("etcd " + nobody)));
}

TEST_F(ReplicatedCoordinatorTest, ASnapshotThatDoesNotParseIsRefusedNamingItsKey) {
  absl::StatusOr<std::unique_ptr<EtcdClient>> etcd = NewGrpcEtcdClient(
      EtcdTarget{etcd_->endpoints(), std::string(kPrefix) + "/"}, EtcdTls{}, absl::Seconds(5));
  ASSERT_THAT(etcd, IsOk());
  etcdserverpb::TxnRequest put;
  etcdserverpb::PutRequest* meta = put.add_success()->mutable_request_put();
  meta->set_key(std::string(kPrefix) + "/snap/meta");
  meta->set_value("not a snapshot's meta");
  ASSERT_THAT((*etcd)->Txn(put), IsOk());
  auto server = StartReplica(ConfigOn(etcd_->endpoints()));
  EXPECT_THAT(server, StatusIs(absl::StatusCode::kDataLoss,
                               HasSubstr(absl::StrCat("etcd key ", kPrefix, "/snap/meta"))));
}

}  // namespace
}  // namespace stoker
