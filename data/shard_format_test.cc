#include "data/shard_format.h"

#include <string>

#include "common/bad_sample.h"
#include "data/shard_reader.h"
#include "data/shard_writer.h"
#include "data/storage.h"
#include "data/testing/shard_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::stoker::testing::CorruptShardRecord;
using ::stoker::testing::ReadFile;
using ::stoker::testing::SampleBytes;
using ::stoker::testing::TempDir;
using ::stoker::testing::WriteFile;
using ::stoker::testing::WriteTestShard;
using ::testing::HasSubstr;

ShardIndex LoadIndex(const std::string& path) {
  auto file = OpenLocalFile(path);
  EXPECT_TRUE(file.ok()) << file.status();
  auto index = LoadStokerShardIndex(**file);
  EXPECT_TRUE(index.ok()) << index.status();
  return *index;
}

// Reads the record into *bytes and parses it; *view points into *bytes (so the caller keeps
// them for as long as it reads the view).
std::string ReadRecordData(const std::string& path, const SampleLocation& location,
                           std::vector<uint8_t>* bytes, RecordView* view, absl::Status* status) {
  auto file = OpenLocalFile(path);
  bytes->resize(location.length);
  EXPECT_TRUE((*file)->ReadAt(location.offset, location.length, bytes->data()).ok());
  *status = ParseRecord(*bytes, view);
  if (!status->ok()) return "";
  return std::string(reinterpret_cast<const char*>(bytes->data()) + view->data_offset,
                     view->data_size);
}

TEST(ShardFormatTest, WriteThenReadEveryRecord) {
  TempDir dir;
  const std::string path = dir.File("a.stoker");
  auto writer = ShardWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  const std::string data = SampleBytes(5);
  ASSERT_TRUE((*writer)
                  ->Add("cat/001", -3, {reinterpret_cast<const uint8_t*>(data.data()), data.size()},
                        "{\"w\":500}")
                  .ok());
  ASSERT_TRUE((*writer)->Add("", 7, {}).ok());
  ASSERT_TRUE((*writer)->Finish().ok());
  EXPECT_EQ((*writer)->Finish().code(), absl::StatusCode::kFailedPrecondition);

  const ShardIndex index = LoadIndex(path);
  EXPECT_EQ(index.damage, "");
  ASSERT_EQ(index.samples.size(), 2u);
  EXPECT_EQ(index.samples[0].offset, shard_format::kFileHeaderSize);
  std::vector<uint8_t> bytes;
  RecordView view;
  absl::Status status;
  EXPECT_EQ(ReadRecordData(path, index.samples[0], &bytes, &view, &status), data);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(view.key, "cat/001");
  EXPECT_EQ(view.metadata, "{\"w\":500}");
  EXPECT_EQ(view.label, -3);
  EXPECT_EQ(ReadRecordData(path, index.samples[1], &bytes, &view, &status), "");
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(view.label, 7);
}

TEST(ShardFormatTest, CrcMismatchIsACorruptRecord) {
  TempDir dir;
  const std::string path = dir.File("a.stoker");
  WriteTestShard(path, 0, 3);
  const ShardIndex index = LoadIndex(path);
  CorruptShardRecord(path, 1);
  std::vector<uint8_t> bytes;
  RecordView view;
  absl::Status status;
  ReadRecordData(path, index.samples[1], &bytes, &view, &status);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), HasSubstr("CRC"));
  EXPECT_EQ(BadSampleReasonOf(status), BadSampleReason::kCorruptRecord);
  ReadRecordData(path, index.samples[2], &bytes, &view, &status);
  EXPECT_TRUE(status.ok());
}

TEST(ShardFormatTest, TruncatedShardRecoversWholeRecordsBeforeTheDamage) {
  TempDir dir;
  const std::string path = dir.File("a.stoker");
  WriteTestShard(path, 0, 10);
  const ShardIndex intact = LoadIndex(path);
  std::string bytes = ReadFile(path);
  // Cut in the middle of record 6: records 0..5 survive.
  WriteFile(path, bytes.substr(0, intact.samples[6].offset + 20));
  const ShardIndex recovered = LoadIndex(path);
  EXPECT_THAT(recovered.damage, HasSubstr("recovered 6 records"));
  ASSERT_EQ(recovered.samples.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(recovered.samples[i].offset, intact.samples[i].offset);
    EXPECT_EQ(recovered.samples[i].length, intact.samples[i].length);
  }
  // Only the trailer lost: every record is recovered.
  WriteFile(path, bytes.substr(0, bytes.size() - 5));
  EXPECT_EQ(LoadIndex(path).samples.size(), 10u);
}

TEST(ShardFormatTest, NotAShardHasNoSamples) {
  TempDir dir;
  WriteFile(dir.File("junk.stoker"), std::string(4096, 'x'));
  const ShardIndex junk = LoadIndex(dir.File("junk.stoker"));
  EXPECT_TRUE(junk.samples.empty());
  EXPECT_THAT(junk.damage, HasSubstr("not a stoker shard"));
  WriteFile(dir.File("empty.stoker"), "");
  EXPECT_THAT(LoadIndex(dir.File("empty.stoker")).damage, HasSubstr("no shard header"));
}

TEST(ShardFormatTest, KeyTooLongIsRefused) {
  TempDir dir;
  auto writer = ShardWriter::Create(dir.File("a.stoker"));
  EXPECT_EQ((*writer)->Add(std::string(70000, 'k'), 0, {}).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(StorageTest, LocalFileErrorsNameThePath) {
  TempDir dir;
  auto missing = OpenLocalFile(dir.File("nope"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr(dir.File("nope")));
  WriteFile(dir.File("small"), "abc");
  auto file = OpenLocalFile(dir.File("small"));
  ASSERT_TRUE(file.ok());
  uint8_t out[4];
  EXPECT_EQ((*file)->ReadAt(1, 3, out).code(), absl::StatusCode::kOutOfRange);
  ASSERT_TRUE((*file)->ReadAt(1, 2, out).ok());
  EXPECT_EQ(out[0], 'b');
}

}  // namespace
}  // namespace stoker
