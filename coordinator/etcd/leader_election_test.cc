// LeaderElection against a real 3-member etcd on loopback (tests/testing/etcd_cluster.h).

#include "coordinator/etcd/leader_election.h"

#include <future>
#include <memory>
#include <string>

#include "coordinator/etcd/grpc_etcd_client.h"
#include "gtest/gtest.h"
#include "tests/testing/etcd_cluster.h"

namespace stoker {
namespace {

using testing::EtcdCluster;

constexpr char kLeaderKey[] = "/t/leader";
constexpr absl::Duration kTtl = absl::Seconds(1);

class LeaderElectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<EtcdCluster>> etcd = EtcdCluster::Start({.members = 3});
    ASSERT_TRUE(etcd.ok()) << etcd.status();
    etcd_ = *std::move(etcd);
    client_a_ = NewClient();
    client_b_ = NewClient();
  }

  std::unique_ptr<EtcdClient> NewClient() {
    absl::StatusOr<std::unique_ptr<EtcdClient>> client =
        NewGrpcEtcdClient(EtcdTarget{etcd_->endpoints(), "/t/"}, EtcdTls{}, absl::Seconds(1));
    EXPECT_TRUE(client.ok()) << client.status();
    return *std::move(client);
  }

  // A put fenced by `election`: whether etcd applied it.
  bool FencedPut(EtcdClient* client, const LeaderElection& election) {
    etcdserverpb::TxnRequest txn;
    *txn.add_compare() = election.Fence();
    etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
    put->set_key("/t/state");
    put->set_value("x");
    absl::StatusOr<etcdserverpb::TxnResponse> response = client->Txn(txn);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() && response->succeeded();
  }

  std::unique_ptr<EtcdCluster> etcd_;
  std::unique_ptr<EtcdClient> client_a_;
  std::unique_ptr<EtcdClient> client_b_;
};

// Waits (bounded) until `election` names `address` as the leader it is waiting for.
void AwaitLeaderSeen(const LeaderElection& election, const std::string& address) {
  for (int i = 0; i < 500 && election.view().leader_address != address; ++i) {
    Clock::Real()->SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(election.view().leader_address, address);
}

TEST_F(LeaderElectionTest, OneWinsTheOtherWaitsAndWinsAfterResign) {
  LeaderElection a(client_a_.get(), kLeaderKey, "a:1", kTtl, Clock::Real());
  LeaderElection b(client_b_.get(), kLeaderKey, "b:1", kTtl, Clock::Real());
  absl::StatusOr<uint64_t> epoch_a = a.Campaign();
  ASSERT_TRUE(epoch_a.ok()) << epoch_a.status();
  EXPECT_EQ(a.view().leading, true);
  EXPECT_EQ(a.view().epoch, *epoch_a);

  std::future<absl::StatusOr<uint64_t>> campaign_b =
      std::async(std::launch::async, [&] { return b.Campaign(); });
  AwaitLeaderSeen(b, "a:1");
  EXPECT_EQ(b.view().leading, false);
  EXPECT_EQ(b.view().epoch, *epoch_a);

  ASSERT_TRUE(a.Resign().ok());
  EXPECT_EQ(a.view().leading, false);
  absl::StatusOr<uint64_t> epoch_b = campaign_b.get();
  ASSERT_TRUE(epoch_b.ok()) << epoch_b.status();
  EXPECT_GT(*epoch_b, *epoch_a);
  EXPECT_EQ(b.view().leading, true);
  EXPECT_EQ(b.view().leader_address, "b:1");
  // The deposed leader's writes fail their compare; the new leader's pass.
  EXPECT_FALSE(FencedPut(client_a_.get(), a));
  EXPECT_TRUE(FencedPut(client_b_.get(), b));
}

TEST_F(LeaderElectionTest, TheOtherWinsWhenTheLeadersLeaseExpires) {
  LeaderElection a(client_a_.get(), kLeaderKey, "a:1", kTtl, Clock::Real());
  LeaderElection b(client_b_.get(), kLeaderKey, "b:1", kTtl, Clock::Real());
  absl::StatusOr<uint64_t> epoch_a = a.Campaign();
  ASSERT_TRUE(epoch_a.ok()) << epoch_a.status();
  EXPECT_TRUE(FencedPut(client_a_.get(), a));
  std::future<absl::StatusOr<uint64_t>> campaign_b =
      std::async(std::launch::async, [&] { return b.Campaign(); });
  AwaitLeaderSeen(b, "a:1");

  // A hangs: no more renewals, no revoke. It stops leading on its own clock; etcd expires the
  // lease and B takes over under a higher epoch.
  a.Abandon();
  EXPECT_TRUE(a.WaitUntilNotLeading(absl::Seconds(10)));
  absl::StatusOr<uint64_t> epoch_b = campaign_b.get();
  ASSERT_TRUE(epoch_b.ok()) << epoch_b.status();
  EXPECT_GT(*epoch_b, *epoch_a);
  EXPECT_FALSE(FencedPut(client_a_.get(), a));
  EXPECT_TRUE(FencedPut(client_b_.get(), b));
  // B renews: it still leads after several TTLs.
  EXPECT_FALSE(b.WaitUntilNotLeading(3 * kTtl));
}

TEST_F(LeaderElectionTest, LeadershipSurvivesKillingEtcdsLeaderMember) {
  LeaderElection a(client_a_.get(), kLeaderKey, "a:1", absl::Seconds(2), Clock::Real());
  absl::StatusOr<uint64_t> epoch = a.Campaign();
  ASSERT_TRUE(epoch.ok()) << epoch.status();
  absl::StatusOr<int> member = etcd_->LeaderIndex();
  ASSERT_TRUE(member.ok()) << member.status();
  ASSERT_TRUE(etcd_->Kill(*member).ok());
  // etcd elects another raft leader within its election timeout and extends leases on the way,
  // so renewals carry on: the lease outlives several TTLs.
  EXPECT_FALSE(a.WaitUntilNotLeading(absl::Seconds(6)));
  EXPECT_EQ(a.view().epoch, *epoch);
  EXPECT_TRUE(FencedPut(client_a_.get(), a));
}

TEST_F(LeaderElectionTest, ACampaignAfterALapsedLeadStartsAfresh) {
  LeaderElection a(client_a_.get(), kLeaderKey, "a:1", kTtl, Clock::Real());
  absl::StatusOr<uint64_t> first = a.Campaign();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(a.Campaign().value_or(0), *first);  // still leading: the same epoch
  a.Abandon();
  ASSERT_TRUE(a.WaitUntilNotLeading(absl::Seconds(10)));
  // Its own key (its lease may not have expired yet in etcd) does not hold it up.
  absl::StatusOr<uint64_t> second = a.Campaign();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_GT(*second, *first);
  EXPECT_TRUE(FencedPut(client_a_.get(), a));
}

TEST_F(LeaderElectionTest, StopEndsACampaignCancelled) {
  LeaderElection a(client_a_.get(), kLeaderKey, "a:1", kTtl, Clock::Real());
  LeaderElection b(client_b_.get(), kLeaderKey, "b:1", kTtl, Clock::Real());
  ASSERT_TRUE(a.Campaign().ok());
  std::future<absl::StatusOr<uint64_t>> campaign_b =
      std::async(std::launch::async, [&] { return b.Campaign(); });
  AwaitLeaderSeen(b, "a:1");
  b.Stop();
  EXPECT_EQ(campaign_b.get().status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(b.view().leading, false);
}

TEST_F(LeaderElectionTest, APausedLeaderKnowsOnWakingThatItNoLongerLeads) {
  FakeClock clock;
  LeaderElection a(client_a_.get(), kLeaderKey, "a:1", kTtl, &clock);
  ASSERT_TRUE(a.Campaign().ok());
  // The pause: no renewal goes out while the clock moves on.
  a.Abandon();
  clock.Advance(kTtl - absl::Milliseconds(1));
  EXPECT_EQ(a.view().leading, true);
  clock.Advance(absl::Milliseconds(1));
  EXPECT_EQ(a.view().leading, false);
  EXPECT_EQ(a.view().leader_address, "");
  EXPECT_TRUE(a.WaitUntilNotLeading(absl::ZeroDuration()));
}

}  // namespace
}  // namespace stoker
