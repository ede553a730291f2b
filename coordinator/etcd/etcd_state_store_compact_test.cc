// EtcdStateStore's snapshots against a real etcd: chunked snapshots, bounded keyspace and
// history, damaged chunks and meta, and a full backend quota.

#include "coordinator/etcd/etcd_state_store.h"
#include "coordinator/etcd/etcd_store_codec.h"
#include "coordinator/etcd/etcd_store_fixture_for_test.h"

namespace stoker {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// Workers 1..3200 with 1 KiB addresses: over 3 MiB, four chunks.
constexpr uint64_t kBigSnapshotWorkers = 3200;
constexpr size_t kBigSnapshotPadding = 1024;

TEST_F(EtcdStoreTest, ASnapshotLargerThanOneRequestRoundTripsInChunks) {
  auto client = Client();
  EtcdStateStore store(client.get(), kStorePrefix);
  ASSERT_THAT(store.Load(), IsOk());
  for (uint64_t n = 1; n <= kBigSnapshotWorkers; n += 500) {
    ASSERT_THAT(store.Sync(store.Add(StoreRecord(n))), IsOk());
  }
  const stoker::v1::StateUpdate snapshot = StoreSnapshot(kBigSnapshotWorkers, kBigSnapshotPadding);
  ASSERT_GT(snapshot.ByteSizeLong(), 3u << 20);
  store.Add(StoreRecord(kBigSnapshotWorkers + 1));  // queued after the snapshot: written later
  ASSERT_THAT(store.Compact([&] {
    return StateStore::Snapshot{snapshot, store.last_added() - 1};
  }),
              IsOk());
  ASSERT_THAT(store.Sync(store.last_added()), IsOk());
  // What the next compaction is weighed by: the log since the snapshot, not the snapshot.
  EXPECT_LT(store.bytes_since_compact(), 1024u);

  EtcdStateStore reader(client.get(), kStorePrefix);
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> loaded = reader.Load();
  ASSERT_THAT(loaded, IsOk());
  ASSERT_EQ(loaded->size(), 2u);
  EXPECT_EQ(loaded->front().SerializeAsString(), snapshot.SerializeAsString());
  EXPECT_THAT(StoreRecordIds(*loaded), ElementsAreArray(StoreRange(1, kBigSnapshotWorkers + 1)));
  // snap/meta, four chunks of generation 1 and the one log key after the snapshot.
  EXPECT_EQ(KeyCount(client.get()), 6);
  EXPECT_FALSE(Get(client.get(), EtcdSnapChunkKey(kStorePrefix, 1, 3)).empty());
}

TEST_F(EtcdStoreTest, ARecordLargerThanOneRequestIsWrittenInPartsAndCompactedAway) {
  auto client = Client();
  auto standby_client = Client();
  EtcdStateStore store(client.get(), kStorePrefix);
  ASSERT_THAT(store.Load(), IsOk());
  EtcdStateStore standby(standby_client.get(), kStorePrefix);
  ASSERT_THAT(standby.Load(), IsOk());
  store.Add(StoreRecord(1));
  store.Add(StoreRecord(2, 3 << 20));  // a resume_rank of a few hundred thousand batches
  store.Add(StoreRecord(3));
  ASSERT_THAT(store.Sync(3), IsOk());
  // log/1, the manifest log/2.large and its four parts, log/3.
  EXPECT_EQ(KeyCount(client.get()), 7);
  EtcdStateStore reader(client.get(), kStorePrefix);
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> loaded = reader.Load();
  ASSERT_THAT(loaded, IsOk());
  EXPECT_THAT(StoreRecordIds(*loaded), ElementsAreArray(StoreRange(1, 3)));
  EXPECT_EQ(loaded->at(1).register_worker().address().size(), (3u << 20) + 2);
  std::vector<uint64_t> seen;
  for (int i = 0; i < 100 && seen.size() < 3; ++i) {
    absl::StatusOr<std::vector<stoker::v1::StateUpdate>> next = standby.Follow(absl::Seconds(1));
    ASSERT_THAT(next, IsOk());
    for (uint64_t id : StoreRecordIds(*next)) seen.push_back(id);
  }
  EXPECT_THAT(seen, ElementsAreArray(StoreRange(1, 3)));

  const std::string part = EtcdLargePartKey(kStorePrefix, 2, 1);
  std::string damaged = Get(client.get(), part);
  damaged[100] ^= 1;
  Put(client.get(), part, damaged);
  EtcdStateStore damaged_reader(client.get(), kStorePrefix);
  EXPECT_THAT(damaged_reader.Load(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("etcd key /store/large/00000000000000000002/000001: chunk")));
  ASSERT_THAT(store.Compact(StoreSnapshot(3, 0)), IsOk());
  EXPECT_EQ(KeyCount(client.get()), 2);  // snap/meta and its chunk: the parts went too
}

TEST_F(EtcdStoreTest, CompactionBoundsTheKeyspaceAndHistoryOverALongRun) {
  auto client = Client();
  EtcdStateStore store(client.get(), kStorePrefix);
  ASSERT_THAT(store.Load(), IsOk());
  constexpr int kRounds = 400;
  constexpr int kPerRound = 20;
  constexpr int kCompactEvery = 25;
  uint64_t written = 0;
  int64_t most_keys = 0;
  for (int round = 1; round <= kRounds; ++round) {
    for (int i = 0; i < kPerRound; ++i) store.Add(StoreRecord(store.last_added() + 1, 1000));
    ASSERT_THAT(store.Sync(store.last_added()), IsOk());
    if (round % kCompactEvery == 0) {
      // A snapshot of about 300 KiB: the state does not grow with the history.
      ASSERT_THAT(store.Compact(StoreSnapshot(300, 1000)), IsOk());
      most_keys = std::max(most_keys, KeyCount(client.get()));
    }
  }
  written = store.stats().bytes_written_total;
  absl::StatusOr<etcdserverpb::StatusResponse> status = client->Status();
  ASSERT_THAT(status, IsOk());
  std::cout << "after " << kRounds << " group commits (" << written / 1024 << " KiB of log) and "
            << kRounds / kCompactEvery << " snapshots of ~300 KiB: at most " << most_keys
            << " keys right after a compaction, " << KeyCount(client.get())
            << " at the end; etcd db size " << status->dbsize() / 1024 << " KiB (in use "
            << status->dbsizeinuse() / 1024 << " KiB), revision " << status->header().revision()
            << "\n";
  EXPECT_EQ(most_keys, 2);  // snap/meta and one chunk: no log key, no older generation
  EXPECT_LE(KeyCount(client.get()), 2 + kCompactEvery);
  // Without the compaction of etcd's history every revision would be kept.
  EXPECT_LT(static_cast<uint64_t>(status->dbsizeinuse()), written);
  etcdserverpb::RangeRequest old_revision;
  old_revision.set_key(EtcdLogKey(kStorePrefix, 1));
  old_revision.set_revision(status->header().revision() - 10);
  EXPECT_THAT(client->Range(old_revision),
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("compacted")));
}

TEST_F(EtcdStoreTest, ADamagedChunkOrMetaIsDataLossNamingItsKey) {
  auto client = Client();
  EtcdStateStore store(client.get(), kStorePrefix);
  ASSERT_THAT(store.Load(), IsOk());
  store.Add(StoreRecord(1));
  ASSERT_THAT(store.Compact(StoreSnapshot(kBigSnapshotWorkers, kBigSnapshotPadding)), IsOk());
  const std::string chunk_key = EtcdSnapChunkKey(kStorePrefix, 1, 2);
  const std::string chunk = Get(client.get(), chunk_key);
  std::string damaged = chunk;
  damaged[damaged.size() / 2] ^= 0x01;
  Put(client.get(), chunk_key, damaged);
  EtcdStateStore reader(client.get(), kStorePrefix);
  EXPECT_THAT(reader.Load(), StatusIs(absl::StatusCode::kDataLoss,
                                      HasSubstr("etcd key /store/snap/00000000000000000001/000002: "
                                                "chunk: crc mismatch")));

  Put(client.get(), chunk_key, chunk);
  const std::string meta_key = EtcdSnapMetaKey(kStorePrefix);
  std::string meta = Get(client.get(), meta_key);
  meta[10] ^= 0x01;
  Put(client.get(), meta_key, meta);
  EtcdStateStore meta_reader(client.get(), kStorePrefix);
  EXPECT_THAT(meta_reader.Load(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("etcd key /store/snap/meta: ")));
}

TEST_F(EtcdStoreTest, AFullQuotaIsResourceExhaustedCountedAndWhatWasStoredStillLoads) {
  StartEtcd({.members = 1, .quota_backend_bytes = 2 << 20});
  auto client = Client();
  EtcdStateStore store(client.get(), kStorePrefix);
  ASSERT_THAT(store.Load(), IsOk());
  absl::Status status;
  uint64_t stored = 0;
  for (int i = 0; i < 400 && status.ok(); ++i) {
    status = store.Sync(store.Add(StoreRecord(store.last_added() + 1, 64 << 10)));
    if (status.ok()) stored = store.last_added();
  }
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("stay queued")));
  ASSERT_GT(stored, 0u);
  const StateStore::Stats stats = store.stats();
  EXPECT_TRUE(stats.quota_exhausted);
  EXPECT_GE(stats.quota_refusals_total, 1u);
  EXPECT_FALSE(stats.failed);  // a full quota does not latch: the records stay queued
  EXPECT_THAT(store.failure(), IsOk());

  EtcdStateStore reader(client.get(), kStorePrefix);
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> loaded = reader.Load();
  ASSERT_THAT(loaded, IsOk());
  EXPECT_THAT(StoreRecordIds(*loaded), ElementsAreArray(StoreRange(1, stored)));
}

}  // namespace
}  // namespace stoker
