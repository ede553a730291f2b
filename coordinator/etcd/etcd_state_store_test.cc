// EtcdStateStore against a real etcd on loopback: round trips, group commit, fencing, damage,
// and standbys following a leader.

#include "coordinator/etcd/etcd_state_store.h"

#include <thread>

#include "absl/synchronization/mutex.h"
#include "coordinator/etcd/etcd_store_codec.h"
#include "coordinator/etcd/etcd_store_fixture_for_test.h"

namespace stoker {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST_F(EtcdStoreTest, RecordsRoundTripAndSequencesContinueInTheNextStore) {
  auto client = Client();
  EtcdStateStore writer(client.get(), kStorePrefix);
  ASSERT_THAT(writer.Load(), IsOk());
  for (uint64_t n = 1; n <= 10; ++n) EXPECT_EQ(writer.Add(StoreRecord(n)), n);
  ASSERT_THAT(writer.Sync(10), IsOk());
  for (uint64_t n = 11; n <= 15; ++n) writer.Add(StoreRecord(n));
  ASSERT_THAT(writer.Sync(15), IsOk());
  EXPECT_EQ(client->txns(), 2);  // one transaction per group commit

  EtcdStateStore next(client.get(), kStorePrefix);
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> loaded = next.Load();
  ASSERT_THAT(loaded, IsOk());
  EXPECT_THAT(StoreRecordIds(*loaded), ElementsAreArray(StoreRange(1, 15)));
  EXPECT_EQ(next.last_added(), 15u);
  EXPECT_EQ(next.Add(StoreRecord(16)), 16u);
  ASSERT_THAT(next.Sync(16), IsOk());
  EXPECT_EQ(Get(client.get(), EtcdLogKey(kStorePrefix, 16)).empty(), false);

  // A store that never loaded does not know where the log ends: it writes nothing.
  EtcdStateStore unloaded(client.get(), kStorePrefix);
  EXPECT_THAT(unloaded.Sync(unloaded.Add(StoreRecord(1))),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("before Load")));
}

TEST_F(EtcdStoreTest, ConcurrentSyncsShareTransactions) {
  auto client = Client();
  EtcdStateStore store(client.get(), kStorePrefix);
  ASSERT_THAT(store.Load(), IsOk());
  constexpr int kThreads = 16;
  constexpr int kPerThread = 25;
  absl::Mutex order;  // the coordinator's lock: Add order is apply order
  std::vector<std::thread> threads;
  const absl::Time start = absl::Now();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        uint64_t seq = 0;
        {
          absl::MutexLock lock(&order);
          seq = store.Add(StoreRecord(store.last_added() + 1, 100));
        }
        EXPECT_THAT(store.Sync(seq), IsOk());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  constexpr int kSyncs = kThreads * kPerThread;
  std::cout << "group commit: " << kSyncs << " Syncs in " << client->txns() << " transactions, "
            << kSyncs / seconds << " records/s through Sync (1 etcd member, 16 threads)\n";
  EXPECT_LT(client->txns(), kSyncs);
  EtcdStateStore reader(client.get(), kStorePrefix);
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> loaded = reader.Load();
  ASSERT_THAT(loaded, IsOk());
  EXPECT_THAT(StoreRecordIds(*loaded), ElementsAreArray(StoreRange(1, kSyncs)));
}

TEST_F(EtcdStoreTest, AWriteAfterTheFenceKeyChangedIsRefusedAndWritesNothing) {
  auto client = Client();
  const std::string leader_key = std::string(kStorePrefix) + "leader";
  Put(client.get(), leader_key, "replica-a");
  etcdserverpb::RangeRequest range;
  range.set_key(leader_key);
  absl::StatusOr<etcdserverpb::RangeResponse> leader = client->Range(range);
  ASSERT_THAT(leader, IsOk());
  etcdserverpb::Compare fence;
  fence.set_key(leader_key);
  fence.set_target(etcdserverpb::Compare::CREATE);
  fence.set_result(etcdserverpb::Compare::EQUAL);
  fence.set_create_revision(leader->kvs(0).create_revision());

  EtcdStateStore store(client.get(), kStorePrefix);
  ASSERT_THAT(store.Load(), IsOk());
  store.SetFence(fence);
  store.Add(StoreRecord(1));
  ASSERT_THAT(store.Sync(1), IsOk());
  // Another replica wins: the leader key is created again, with a later create revision.
  etcdserverpb::TxnRequest takeover;
  takeover.add_success()->mutable_request_delete_range()->set_key(leader_key);
  ASSERT_THAT(client->Txn(takeover), IsOk());
  Put(client.get(), leader_key, "replica-b");

  store.Add(StoreRecord(2));
  EXPECT_THAT(store.Sync(2), StatusIs(absl::StatusCode::kFailedPrecondition,
                                      HasSubstr("etcd store: no longer the leader")));
  EXPECT_THAT(store.failure(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr(leader_key)));
  store.Add(StoreRecord(3));
  EXPECT_THAT(store.Sync(3), StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("leader")));
  EXPECT_THAT(store.Compact(StoreSnapshot(3, 0)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("leader")));
  EXPECT_TRUE(store.stats().failed);

  EtcdStateStore reader(client.get(), kStorePrefix);
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> loaded = reader.Load();
  ASSERT_THAT(loaded, IsOk());
  EXPECT_THAT(StoreRecordIds(*loaded), ElementsAreArray({1u}));
}

TEST_F(EtcdStoreTest, SyncThenAnswersEveryCallerInOrderWithNoThreadWaitingForIt) {
  auto client = Client();
  EtcdStateStore store(client.get(), kStorePrefix);
  ASSERT_THAT(store.Load(), IsOk());
  constexpr uint64_t kRecords = 300;
  absl::Mutex mu;
  std::vector<uint64_t> answered;  // sequences in the order their callbacks ran
  std::vector<absl::Status> statuses;
  // One thread adds and asks for every record and never waits: the store's writer answers.
  for (uint64_t n = 1; n <= kRecords; ++n) {
    store.SyncThen(store.Add(StoreRecord(n, 100)), [&, n](absl::Status status) {
      absl::MutexLock lock(&mu);
      answered.push_back(n);
      statuses.push_back(std::move(status));
    });
  }
  {
    absl::MutexLock lock(&mu);
    ASSERT_TRUE(mu.AwaitWithTimeout(
        absl::Condition(
            +[](std::vector<uint64_t>* a) { return a->size() == kRecords; }, &answered),
        absl::Seconds(60)));
  }
  EXPECT_THAT(answered, ElementsAreArray(StoreRange(1, kRecords)));
  for (const absl::Status& status : statuses) EXPECT_THAT(status, IsOk());
  EXPECT_LT(client->txns(), static_cast<int64_t>(kRecords));  // group commits
  // A sequence already durable is answered at once; then a lost answer fails the callers of
  // that write (their records stay queued) and the next write stores them once.
  absl::Status durable = absl::UnknownError("not answered");
  store.SyncThen(kRecords, [&](absl::Status status) { durable = std::move(status); });
  store.Add(StoreRecord(kRecords + 1));
  client->LoseAnswers(1);
  EXPECT_THAT(store.Sync(kRecords + 1),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("stay queued")));
  EXPECT_THAT(durable, IsOk());
  ASSERT_THAT(store.Sync(store.Add(StoreRecord(kRecords + 2))), IsOk());
  EtcdStateStore reader(client.get(), kStorePrefix);
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> loaded = reader.Load();
  ASSERT_THAT(loaded, IsOk());
  EXPECT_THAT(StoreRecordIds(*loaded), ElementsAreArray(StoreRange(1, kRecords + 2)));
}

TEST_F(EtcdStoreTest, RecordsOfAnUnconfirmedWriteStayQueuedAndAreStoredOnce) {
  auto client = Client();
  auto standby_client = Client();
  EtcdStateStore store(client.get(), kStorePrefix);
  ASSERT_THAT(store.Load(), IsOk());
  EtcdStateStore standby(standby_client.get(), kStorePrefix);
  ASSERT_THAT(standby.Load(), IsOk());
  ASSERT_THAT(store.Sync(store.Add(StoreRecord(1))), IsOk());
  // etcd applies records 2..3 but the answer is lost: Sync fails, nothing is latched.
  store.Add(StoreRecord(2));
  store.Add(StoreRecord(3));
  client->LoseAnswers(1);
  EXPECT_THAT(store.Sync(3),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("records 2..3 stay queued")));
  EXPECT_THAT(store.failure(), IsOk());
  // The next Sync writes 2..4 at log/2 again; readers see every record once.
  store.Add(StoreRecord(4));
  ASSERT_THAT(store.Sync(4), IsOk());
  EXPECT_EQ(store.last_sequence(), 4u);
  EtcdStateStore reader(client.get(), kStorePrefix);
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> loaded = reader.Load();
  ASSERT_THAT(loaded, IsOk());
  EXPECT_THAT(StoreRecordIds(*loaded), ElementsAreArray(StoreRange(1, 4)));
  std::vector<uint64_t> seen;
  for (int i = 0; i < 100 && seen.size() < 4; ++i) {
    absl::StatusOr<std::vector<stoker::v1::StateUpdate>> next = standby.Follow(absl::Seconds(1));
    ASSERT_THAT(next, IsOk());
    for (uint64_t id : StoreRecordIds(*next)) seen.push_back(id);
  }
  EXPECT_THAT(seen, ElementsAreArray(StoreRange(1, 4)));
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> idle =
      standby.Follow(absl::Milliseconds(200));
  ASSERT_THAT(idle, IsOk());
  EXPECT_THAT(*idle, IsEmpty());
}

TEST_F(EtcdStoreTest, WhileEtcdIsPausedRecordsStayQueuedThenAreWritten) {
  auto client = Client();
  EtcdStateStore store(client.get(), kStorePrefix);
  ASSERT_THAT(store.Load(), IsOk());
  ASSERT_THAT(store.Sync(store.Add(StoreRecord(1))), IsOk());
  ASSERT_THAT(etcd_->Stop(0), IsOk());
  const absl::Status paused = store.Sync(store.Add(StoreRecord(2)));
  ASSERT_THAT(etcd_->Resume(0), IsOk());
  EXPECT_TRUE(absl::IsUnavailable(paused) || absl::IsDeadlineExceeded(paused)) << paused;
  EXPECT_THAT(store.failure(), IsOk());
  ASSERT_THAT(store.Sync(2), IsOk());
  EtcdStateStore reader(client.get(), kStorePrefix);
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> loaded = reader.Load();
  ASSERT_THAT(loaded, IsOk());
  EXPECT_THAT(StoreRecordIds(*loaded), ElementsAreArray(StoreRange(1, 2)));
}

TEST_F(EtcdStoreTest, ADamagedLogRecordIsDataLossNamingItsKey) {
  auto client = Client();
  EtcdStateStore store(client.get(), kStorePrefix);
  ASSERT_THAT(store.Load(), IsOk());
  store.Add(StoreRecord(1));
  store.Add(StoreRecord(2));
  ASSERT_THAT(store.Sync(2), IsOk());
  const std::string key = EtcdLogKey(kStorePrefix, 1);
  std::string value = Get(client.get(), key);
  ASSERT_FALSE(value.empty());
  value.back() ^= 0x5a;  // the second record's payload
  Put(client.get(), key, value);
  EtcdStateStore reader(client.get(), kStorePrefix);
  EXPECT_THAT(reader.Load(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("etcd key /store/log/00000000000000000001: record 1")));
}

TEST_F(EtcdStoreTest, AStandbyFollowsTheLeaderThenTakesOver) {
  auto leader_client = Client();
  auto standby_client = Client();
  EtcdStateStore leader(leader_client.get(), kStorePrefix);
  ASSERT_THAT(leader.Load(), IsOk());
  leader.Add(StoreRecord(1));
  ASSERT_THAT(leader.Sync(1), IsOk());

  EtcdStateStore standby(standby_client.get(), kStorePrefix);
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> loaded = standby.Load();
  ASSERT_THAT(loaded, IsOk());
  std::vector<uint64_t> seen = StoreRecordIds(*loaded);
  for (uint64_t n = 2; n <= 30; ++n) {
    leader.Add(StoreRecord(n));
    if (n % 4 == 0 || n == 30) {
      ASSERT_THAT(leader.Sync(n), IsOk());
    }
  }
  for (int i = 0; i < 100 && seen.size() < 30; ++i) {
    absl::StatusOr<std::vector<stoker::v1::StateUpdate>> next = standby.Follow(absl::Seconds(1));
    ASSERT_THAT(next, IsOk());
    for (uint64_t id : StoreRecordIds(*next)) seen.push_back(id);
  }
  EXPECT_THAT(seen, ElementsAreArray(StoreRange(1, 30)));
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> idle =
      standby.Follow(absl::Milliseconds(100));
  ASSERT_THAT(idle, IsOk());
  EXPECT_THAT(*idle, IsEmpty());

  // A compaction with records queued: a standby that keeps up sees them, and no reload.
  leader.Add(StoreRecord(31));
  leader.Add(StoreRecord(32));
  ASSERT_THAT(leader.Compact(StoreSnapshot(32, 0)), IsOk());
  for (int i = 0; i < 100 && seen.size() < 32; ++i) {
    absl::StatusOr<std::vector<stoker::v1::StateUpdate>> next = standby.Follow(absl::Seconds(1));
    ASSERT_THAT(next, IsOk());
    for (uint64_t id : StoreRecordIds(*next)) seen.push_back(id);
  }
  EXPECT_THAT(seen, ElementsAreArray(StoreRange(1, 32)));

  // The leader's last appends reach etcd but not the standby before it wins.
  leader.Add(StoreRecord(33));
  leader.Add(StoreRecord(34));
  ASSERT_THAT(leader.Sync(34), IsOk());
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> rest = standby.TakeOver();
  ASSERT_THAT(rest, IsOk());
  EXPECT_THAT(StoreRecordIds(*rest), ElementsAreArray({33u, 34u}));
  EXPECT_EQ(standby.Add(StoreRecord(35)), 35u);
  ASSERT_THAT(standby.Sync(35), IsOk());
  EtcdStateStore reader(leader_client.get(), kStorePrefix);
  loaded = reader.Load();
  ASSERT_THAT(loaded, IsOk());
  EXPECT_THAT(StoreRecordIds(*loaded), ElementsAreArray(StoreRange(1, 35)));
}

TEST_F(EtcdStoreTest, AStandbyBehindACompactionIsToldToLoadAgain) {
  auto client = Client();
  EtcdStateStore leader(client.get(), kStorePrefix);
  ASSERT_THAT(leader.Load(), IsOk());
  EtcdStateStore standby(client.get(), kStorePrefix);
  ASSERT_THAT(standby.Load(), IsOk());
  for (uint64_t n = 1; n <= 5; ++n) ASSERT_THAT(leader.Sync(leader.Add(StoreRecord(n))), IsOk());
  ASSERT_THAT(leader.Compact(StoreSnapshot(5, 0)), IsOk());
  EXPECT_THAT(standby.Follow(absl::Seconds(5)),
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("compacted")));
  EtcdStateStore again(client.get(), kStorePrefix);
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> loaded = again.Load();
  ASSERT_THAT(loaded, IsOk());
  EXPECT_THAT(StoreRecordIds(*loaded), ElementsAreArray(StoreRange(1, 5)));
}

// Three members: the leader writes through one, the standby follows through another.
class EtcdStoreClusterTest : public EtcdStoreTest {
 protected:
  void SetUp() override { StartEtcd({.members = 3}); }
};

TEST_F(EtcdStoreClusterTest, AStandbyOnAnotherMemberSeesEveryAppendInOrder) {
  auto leader_client = Client(0);
  auto standby_client = Client(2);
  EtcdStateStore leader(leader_client.get(), kStorePrefix);
  ASSERT_THAT(leader.Load(), IsOk());
  EtcdStateStore standby(standby_client.get(), kStorePrefix);
  ASSERT_THAT(standby.Load(), IsOk());
  for (uint64_t n = 1; n <= 20; ++n) ASSERT_THAT(leader.Sync(leader.Add(StoreRecord(n))), IsOk());
  std::vector<uint64_t> seen;
  for (int i = 0; i < 100 && seen.size() < 20; ++i) {
    absl::StatusOr<std::vector<stoker::v1::StateUpdate>> next = standby.Follow(absl::Seconds(1));
    ASSERT_THAT(next, IsOk());
    for (uint64_t id : StoreRecordIds(*next)) seen.push_back(id);
  }
  EXPECT_THAT(seen, ElementsAreArray(StoreRange(1, 20)));
}

}  // namespace
}  // namespace stoker
