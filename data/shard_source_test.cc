#include "data/shard_source.h"

#include <string>

#include "common/bad_sample.h"
#include "data/shard_reader.h"
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
using ::stoker::testing::WriteTar;
using ::stoker::testing::WriteTestDataset;
using ::stoker::testing::WriteTestShard;
using ::testing::HasSubstr;
using ::testing::StartsWith;

stoker::v1::DatasetSpec ManifestSpec(const std::string& manifest) {
  stoker::v1::DatasetSpec spec;
  spec.mutable_shards()->set_manifest(manifest);
  return spec;
}

std::string Encoded(const SampleBuffer& sample) {
  return std::string(sample.encoded.begin(), sample.encoded.end());
}

TEST(ShardSourceTest, ReadsEverySampleThroughTheManifest) {
  TempDir dir;
  auto source = CreateSource(ManifestSpec(WriteTestDataset(dir.path(), 3, 7)), 0);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->size(), 21u);
  EXPECT_TRUE((*source)->format().encoded);
  SampleBuffer sample;
  for (uint64_t i = 0; i < 21; ++i) {
    ASSERT_TRUE((*source)->Read(i, &sample).ok()) << i;
    EXPECT_EQ(Encoded(sample), SampleBytes(i));
    EXPECT_EQ(sample.label, static_cast<int64_t>(i % 10));
  }
  EXPECT_EQ((*source)->Read(21, &sample).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ((*source)->Locate(7), "shard-00001.stoker offset 16");
  EXPECT_EQ(dynamic_cast<const ShardSource&>(**source).class_names().size(), 10u);
}

TEST(ShardSourceTest, ReusesTheSampleBuffer) {
  TempDir dir;
  auto source = CreateSource(ManifestSpec(WriteTestDataset(dir.path(), 1, 50)), 0);
  SampleBuffer sample;
  sample.encoded.reserve(4096);
  const uint8_t* storage = sample.encoded.data();
  for (uint64_t i = 0; i < 50; ++i) ASSERT_TRUE((*source)->Read(i, &sample).ok());
  EXPECT_EQ(sample.encoded.data(), storage);
}

TEST(ShardSourceTest, PathsAndGlobsWithoutManifest) {
  TempDir dir;
  WriteTestShard(dir.File("b-1.stoker"), 4, 4);
  WriteTestShard(dir.File("b-0.stoker"), 0, 4);
  stoker::v1::DatasetSpec spec;
  spec.mutable_shards()->add_paths(dir.File("b-*.stoker"));
  auto source = CreateSource(spec, 0);
  ASSERT_TRUE(source.ok()) << source.status();
  ASSERT_EQ((*source)->size(), 8u);
  SampleBuffer sample;
  ASSERT_TRUE((*source)->Read(5, &sample).ok());
  EXPECT_EQ(Encoded(sample), SampleBytes(5));

  spec.mutable_shards()->set_paths(0, dir.File("none-*.stoker"));
  EXPECT_EQ(CreateSource(spec, 0).status().code(), absl::StatusCode::kNotFound);
}

TEST(ShardSourceTest, WebDatasetTar) {
  TempDir dir;
  WriteTar(dir.File("w.tar"),
           {{"x/0.jpg", "zero"}, {"x/0.cls", "4"}, {"x/1.jpg", "one"}, {"x/1.cls", "2"}});
  stoker::v1::DatasetSpec spec;
  spec.mutable_shards()->add_paths(dir.File("w.tar"));
  auto source = CreateSource(spec, 0);
  ASSERT_TRUE(source.ok()) << source.status();
  SampleBuffer sample;
  ASSERT_TRUE((*source)->Read(1, &sample).ok());
  EXPECT_EQ(Encoded(sample), "one");
  EXPECT_EQ(sample.label, 2);
  EXPECT_EQ((*source)->Locate(1), "w.tar offset 2560");
}

TEST(ShardSourceTest, TruncatedShardReportsLostSamplesAsBad) {
  TempDir dir;
  const std::string manifest = WriteTestDataset(dir.path(), 2, 10);
  const std::string shard = dir.File("shard-00000.stoker");
  auto file = OpenLocalFile(shard);
  const SampleLocation cut = (*LoadStokerShardIndex(**file)).samples[4];
  WriteFile(shard, ReadFile(shard).substr(0, cut.offset + 3));
  auto source = CreateSource(ManifestSpec(manifest), 0);
  ASSERT_TRUE(source.ok());
  SampleBuffer sample;
  EXPECT_TRUE((*source)->Read(3, &sample).ok());
  for (uint64_t i = 4; i < 10; ++i) {
    absl::Status status = (*source)->Read(i, &sample);
    EXPECT_EQ(BadSampleReasonOf(status), BadSampleReason::kReadError) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("recovered 4 records"));
  }
  EXPECT_TRUE((*source)->Read(10, &sample).ok());
  EXPECT_EQ((*source)->Locate(5), "shard-00000.stoker record 5");
}

TEST(ShardSourceTest, CorruptRecordIsABadSampleNamingTheShard) {
  TempDir dir;
  const std::string manifest = WriteTestDataset(dir.path(), 1, 5);
  CorruptShardRecord(dir.File("shard-00000.stoker"), 2);
  auto source = CreateSource(ManifestSpec(manifest), 0);
  SampleBuffer sample;
  absl::Status status = (*source)->Read(2, &sample);
  EXPECT_EQ(BadSampleReasonOf(status), BadSampleReason::kCorruptRecord);
  EXPECT_THAT(std::string(status.message()), StartsWith("shard-00000.stoker record 2: "));
  EXPECT_TRUE((*source)->Read(3, &sample).ok());
}

TEST(ShardSourceTest, MissingShardIsNotFound) {
  TempDir dir;
  const std::string manifest = WriteTestDataset(dir.path(), 2, 3);
  std::remove(dir.File("shard-00001.stoker").c_str());
  auto source = CreateSource(ManifestSpec(manifest), 0);
  ASSERT_TRUE(source.ok());  // The manifest is enough to open the dataset.
  SampleBuffer sample;
  absl::Status status = (*source)->Read(4, &sample);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()), HasSubstr("shard-00001.stoker"));
}

TEST(ShardSourceTest, BadSpecsAndManifests) {
  TempDir dir;
  stoker::v1::DatasetSpec spec;
  spec.mutable_shards();
  EXPECT_EQ(ValidateDatasetSpec(spec).code(), absl::StatusCode::kInvalidArgument);
  spec.mutable_shards()->set_manifest("m.json");
  spec.mutable_shards()->add_paths("x");
  EXPECT_THAT(std::string(ValidateDatasetSpec(spec).message()),
              HasSubstr("exactly one of manifest and paths"));
  auto missing = CreateSource(ManifestSpec(dir.File("missing.json")), 0);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()),
              StartsWith("dataset.shards.manifest: cannot open " + dir.File("missing.json")));
  WriteFile(dir.File("bad.json"), "{ not json");
  EXPECT_EQ(CreateSource(ManifestSpec(dir.File("bad.json")), 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  WriteFile(dir.File("escape.json"), R"({"shards": [{"path": "../x.stoker", "records": 1}]})");
  auto escape = CreateSource(ManifestSpec(dir.File("escape.json")), 0);
  EXPECT_EQ(escape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(escape.status().message()), HasSubstr("shards[0].path"));
  WriteFile(dir.File("empty.json"), R"({"shards": []})");
  EXPECT_EQ(CreateSource(ManifestSpec(dir.File("empty.json")), 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stoker
