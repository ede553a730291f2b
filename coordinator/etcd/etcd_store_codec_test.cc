// The etcd store's keys and values, without etcd.

#include "coordinator/etcd/etcd_store_codec.h"

#include "coordinator/status_matchers_for_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

stoker::v1::StateUpdate CodecSnapshot(int workers, size_t padding) {
  stoker::v1::StateUpdate update;
  for (int id = 1; id <= workers; ++id) {
    auto* worker = update.mutable_restore()->add_workers();
    worker->set_worker_id(id);
    worker->set_address(std::string(padding, 'a'));
  }
  return update;
}

TEST(EtcdStoreCodecTest, LogKeysSortBySequenceAndParseBack) {
  EXPECT_EQ(EtcdLogKey("/p/", 12), "/p/log/00000000000000000012");
  EXPECT_LT(EtcdLogKey("/p/", 9), EtcdLogKey("/p/", 10));
  bool large = true;
  absl::StatusOr<uint64_t> sequence = ParseEtcdLogKey("/p/", EtcdLogKey("/p/", 12), &large);
  ASSERT_THAT(sequence, IsOk());
  EXPECT_EQ(*sequence, 12u);
  EXPECT_FALSE(large);
  sequence = ParseEtcdLogKey("/p/", EtcdLargeRecordKey("/p/", 13), &large);
  ASSERT_THAT(sequence, IsOk());
  EXPECT_EQ(*sequence, 13u);
  EXPECT_TRUE(large);
  EXPECT_LT(EtcdLargeRecordKey("/p/", 13), EtcdLogKey("/p/", 14));
  EXPECT_THAT(
      ParseEtcdLogKey("/p/", "/p/log/12", &large),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("etcd key /p/log/12: not a log key")));
  // Chunks and meta sort apart from each other: a range delete of generations spares meta.
  EXPECT_LT(EtcdSnapChunkKey("/p/", 7, 999999), EtcdSnapMetaKey("/p/"));
  EXPECT_EQ(EtcdSnapChunkKey("/p/", 1, 2), "/p/snap/00000000000000000001/000002");
}

TEST(EtcdStoreCodecTest, MetaRoundTripsAndDamageNamesTheKey) {
  EtcdSnapMeta meta{3, 40, 2, 0xabcdef01, 1 << 21};
  absl::StatusOr<EtcdSnapMeta> back = DecodeEtcdSnapMeta("/p/snap/meta", EncodeEtcdSnapMeta(meta));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->generation, 3u);
  EXPECT_EQ(back->through, 40u);
  EXPECT_EQ(back->chunks, 2u);
  EXPECT_EQ(back->crc, 0xabcdef01u);
  EXPECT_EQ(back->bytes, 1u << 21);
  std::string damaged = EncodeEtcdSnapMeta(meta);
  damaged[9] ^= 1;
  EXPECT_THAT(DecodeEtcdSnapMeta("/p/snap/meta", damaged),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("etcd key /p/snap/meta: crc")));
  EXPECT_THAT(DecodeEtcdSnapMeta("/p/snap/meta", EncodeEtcdSnapMeta(meta) + "x"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("/p/snap/meta")));
}

TEST(EtcdStoreCodecTest, ALargeSnapshotSplitsIntoChunksUnderOneMebibyte) {
  const stoker::v1::StateUpdate snapshot = CodecSnapshot(2500, 1000);
  EtcdSnapMeta meta;
  const std::vector<std::string> values = EncodeEtcdSnapshot(snapshot, &meta);
  ASSERT_EQ(values.size(), 3u);
  EXPECT_EQ(meta.chunks, 3u);
  std::vector<std::pair<std::string, std::string>> chunks;
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_LE(values[i].size(), 1u << 20);
    chunks.emplace_back(EtcdSnapChunkKey("/p/", 1, i), values[i]);
  }
  absl::StatusOr<stoker::v1::StateUpdate> back = DecodeEtcdSnapshot("/p/snap/meta", meta, chunks);
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->SerializeAsString(), snapshot.SerializeAsString());
  // A chunk from another snapshot passes its own crc but not meta's checksum.
  chunks[2].second = EncodeEtcdSnapshot(CodecSnapshot(1, 10), &meta).front();
  meta.chunks = 3;
  EXPECT_THAT(DecodeEtcdSnapshot("/p/snap/meta", meta, chunks),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("etcd key /p/snap/meta: ")));
}

TEST(EtcdStoreCodecTest, LogValuesHoldFramedRecordsAndDamageNamesTheRecord) {
  std::string value;
  stoker::v1::StateUpdate update;
  for (int i = 1; i <= 3; ++i) {
    update.mutable_register_worker()->set_worker_id(i);
    AppendEtcdLogRecord(update, &value);
  }
  std::vector<stoker::v1::StateUpdate> records;
  ASSERT_THAT(DecodeEtcdLogValue("/p/log/1", value, &records), IsOk());
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2].register_worker().worker_id(), 3u);
  records.clear();
  EXPECT_THAT(DecodeEtcdLogValue("/p/log/1", value.substr(0, value.size() - 1), &records),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("etcd key /p/log/1: record 2")));
}

}  // namespace
}  // namespace stoker
