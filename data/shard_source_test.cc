#include "data/shard_source.h"

#include <dirent.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/bad_sample.h"
#include "common/byte_codec.h"
#include "common/field_limits.h"
#include "data/manifest.h"
#include "data/record_fields.h"
#include "data/shard_reader.h"
#include "data/shard_writer.h"
#include "data/storage_backend.h"
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

// File descriptors this process holds open (/proc/self/fd, less the listing's own).
int OpenFiles() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 1 << 20;  // EMFILE: the process ran out of descriptors.
  int count = 0;
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return count - 3;  // ".", ".." and the listing's descriptor
}

std::string Encoded(const SampleBuffer& sample) {
  return std::string(sample.encoded.begin(), sample.encoded.end());
}

TEST(ShardSourceTest, ReadsEverySampleThroughTheManifest) {
  TempDir dir;
  auto source = CreateSource(ManifestSpec(WriteTestDataset(dir.path(), 3, 7)), 0,
                             DatasetIo::FromEnvironment());
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

TEST(ShardSourceTest, FingerprintIsTheSameForTheSameShardsAndDiffersForOthers) {
  TempDir dir;
  const std::string manifest = WriteTestDataset(dir.path(), 3, 7);
  auto a = CreateSource(ManifestSpec(manifest), 0, DatasetIo::FromEnvironment());
  auto b = CreateSource(ManifestSpec(manifest), 5, DatasetIo::FromEnvironment(), true);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE((*a)->fingerprint(), 0u);
  EXPECT_EQ((*a)->fingerprint(), (*b)->fingerprint());  // another job on the same dataset
  TempDir other;
  auto c = CreateSource(ManifestSpec(WriteTestDataset(other.path(), 3, 7)), 0,
                        DatasetIo::FromEnvironment());
  ASSERT_TRUE(c.ok());
  EXPECT_NE((*c)->fingerprint(), (*a)->fingerprint());  // other shard locations
}

TEST(ShardSourceTest, ReusesTheSampleBuffer) {
  TempDir dir;
  auto source = CreateSource(ManifestSpec(WriteTestDataset(dir.path(), 1, 50)), 0,
                             DatasetIo::FromEnvironment());
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
  auto source = CreateSource(spec, 0, DatasetIo::FromEnvironment());
  ASSERT_TRUE(source.ok()) << source.status();
  ASSERT_EQ((*source)->size(), 8u);
  SampleBuffer sample;
  ASSERT_TRUE((*source)->Read(5, &sample).ok());
  EXPECT_EQ(Encoded(sample), SampleBytes(5));

  spec.mutable_shards()->set_paths(0, dir.File("none-*.stoker"));
  EXPECT_EQ(CreateSource(spec, 0, DatasetIo::FromEnvironment()).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(ShardSourceTest, WebDatasetTar) {
  TempDir dir;
  WriteTar(dir.File("w.tar"),
           {{"x/0.jpg", "zero"}, {"x/0.cls", "4"}, {"x/1.jpg", "one"}, {"x/1.cls", "2"}});
  stoker::v1::DatasetSpec spec;
  spec.mutable_shards()->add_paths(dir.File("w.tar"));
  auto source = CreateSource(spec, 0, DatasetIo::FromEnvironment());
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
  auto source = CreateSource(ManifestSpec(manifest), 0, DatasetIo::FromEnvironment());
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
  auto source = CreateSource(ManifestSpec(manifest), 0, DatasetIo::FromEnvironment());
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
  auto source = CreateSource(ManifestSpec(manifest), 0, DatasetIo::FromEnvironment());
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
  auto missing =
      CreateSource(ManifestSpec(dir.File("missing.json")), 0, DatasetIo::FromEnvironment());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()),
              StartsWith("dataset.shards.manifest: cannot open " + dir.File("missing.json")));
  WriteFile(dir.File("bad.json"), "{ not json");
  EXPECT_EQ(CreateSource(ManifestSpec(dir.File("bad.json")), 0, DatasetIo::FromEnvironment())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  WriteFile(dir.File("escape.json"), R"({"shards": [{"path": "../x.stoker", "records": 1}]})");
  auto escape =
      CreateSource(ManifestSpec(dir.File("escape.json")), 0, DatasetIo::FromEnvironment());
  EXPECT_EQ(escape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(escape.status().message()), HasSubstr("shards[0].path"));
  WriteFile(dir.File("empty.json"), R"({"shards": []})");
  EXPECT_EQ(CreateSource(ManifestSpec(dir.File("empty.json")), 0, DatasetIo::FromEnvironment())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ShardSourceTest, KeepsAtMostMaxOpenShardsOpenAcrossManyShards) {
  TempDir dir;
  constexpr int kShards = 2000;
  constexpr uint64_t kMaxOpen = 16;
  // 2,000 shards of 2 samples: links to one written shard (2,000 fsyncs would take seconds).
  WriteTestShard(dir.File("one.stoker"), 0, 2);
  std::vector<ShardRef> shards;
  for (int s = 0; s < kShards; ++s) {
    const std::string name = dir.File(absl::StrCat("shard-", s, ".stoker"));
    std::filesystem::create_symlink(dir.File("one.stoker"), name);
    shards.push_back(ShardRef{name, 2});
  }
  auto pool = std::make_shared<OpenShardPool>(OpenShardLimits{kMaxOpen, uint64_t{1} << 20});
  const ShardSource source(std::move(shards), {}, DatasetIo{Storage::FromEnvironment(), pool});
  const int before = OpenFiles();
  SampleBuffer sample;
  int most_open = 0;
  auto read = [&](uint64_t index) {
    ASSERT_TRUE(source.Read(index, &sample).ok()) << index;
    ASSERT_EQ(Encoded(sample), SampleBytes(index % 2));
    most_open = std::max(most_open, OpenFiles() - before);
  };
  // Every sample of every shard, then a stride that revisits shards long closed.
  for (uint64_t i = 0; i < 2 * kShards; ++i) read(i);
  for (uint64_t i = 0; i < 2 * kShards; i += 97) read(i);
  EXPECT_LE(most_open, static_cast<int>(kMaxOpen));
  EXPECT_GT(most_open, 0);
  EXPECT_EQ(pool->held(), kMaxOpen);
}

// A web-scale manifest: the source learns N from it without opening a shard, and holds only the
// locations and prefix sums.
TEST(ShardSourceTest, ManifestOfManyShardsOpensNoShard) {
  TempDir dir;
  constexpr int kShards = 100000;
  stoker::v1::ShardManifest manifest;
  manifest.set_version(1);
  for (int s = 0; s < kShards; ++s) {
    stoker::v1::ManifestShard* shard = manifest.add_shards();
    shard->set_path(absl::StrCat("shard-", s, ".stoker"));
    shard->set_records(10000);
  }
  ASSERT_TRUE(WriteManifest(*Storage::FromEnvironment(), manifest, dir.File("manifest.json")).ok());
  auto pool = std::make_shared<OpenShardPool>(OpenShardLimits{});
  const DatasetIo io{Storage::FromEnvironment(), pool};
  auto opened = ShardSource::Open(ManifestSpec(dir.File("manifest.json")).shards(), io);
  ASSERT_TRUE(opened.ok()) << opened.status();
  const ShardSource source((*opened)->shards(), {}, io);
  EXPECT_EQ(source.size(), uint64_t{kShards} * 10000);
  EXPECT_EQ(source.Locate(uint64_t{kShards} * 10000 - 1), "shard-99999.stoker record 9999");
  // Locate tried to open that shard, which does not exist: a failure takes no place in the pool.
  EXPECT_EQ(pool->held(), 0u);
}

TEST(ShardSourceTest, IndexBytesBoundTheOpenShards) {
  TempDir dir;
  const std::string manifest = WriteTestDataset(dir.path(), 8, 10);
  // Room for about two indexes of 10 records.
  auto pool =
      std::make_shared<OpenShardPool>(OpenShardLimits{100, 2 * 10 * sizeof(SampleLocation) + 8});
  const DatasetIo io{Storage::FromEnvironment(), pool};
  auto opened = ShardSource::Open(ManifestSpec(manifest).shards(), io);
  ASSERT_TRUE(opened.ok()) << opened.status();
  const ShardSource source((*opened)->shards(), {}, io);
  SampleBuffer sample;
  for (uint64_t i = 0; i < 80; ++i) ASSERT_TRUE(source.Read(i, &sample).ok()) << i;
  EXPECT_LE(pool->held_index_bytes(), 2 * 10 * sizeof(SampleLocation) + 8);
  EXPECT_GE(pool->held(), 1u);
  EXPECT_LE(pool->held(), 2u);
}

TEST(ShardSourceTest, JobsOverTheSameShardsShareThePool) {
  TempDir dir;
  const std::string manifest = WriteTestDataset(dir.path(), 3, 4);
  auto pool = std::make_shared<OpenShardPool>(OpenShardLimits{});
  const DatasetIo io{Storage::FromEnvironment(), pool};
  auto opened = ShardSource::Open(ManifestSpec(manifest).shards(), io);
  ASSERT_TRUE(opened.ok()) << opened.status();
  const ShardSource first((*opened)->shards(), {}, io);
  const ShardSource second((*opened)->shards(), {}, io);
  SampleBuffer sample;
  for (uint64_t i = 0; i < 12; ++i) {
    ASSERT_TRUE(first.Read(i, &sample).ok());
    ASSERT_TRUE(second.Read(i, &sample).ok());
  }
  EXPECT_EQ(pool->held(), 3u);
}

// No process-wide storage or pool: a source reads through the ones it is handed, and another
// DatasetIo sees none of its reads.
TEST(ShardSourceTest, ReadsThroughTheStorageAndPoolItIsHanded) {
  TempDir dir;
  const std::string manifest = WriteTestDataset(dir.path(), 3, 4);
  const DatasetIo io = DatasetIo::FromEnvironment();
  const DatasetIo other = DatasetIo::FromEnvironment();
  auto source = CreateSource(ManifestSpec(manifest), 0, io);
  ASSERT_TRUE(source.ok()) << source.status();
  SampleBuffer sample;
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < 12; ++i) {
    ASSERT_TRUE((*source)->Read(i, &sample).ok()) << i;
    bytes += sample.encoded.size();
  }
  EXPECT_EQ(io.shards->held(), 3u);
  EXPECT_GT(bytes, 0u);
  EXPECT_GE(io.storage->sample_bytes(), bytes);
  EXPECT_EQ(other.shards->held(), 0u);
  EXPECT_EQ(other.storage->sample_bytes(), 0u);
}

TEST(OpenShardLimitsTest, ZeroIsRefusedByName) {
  EXPECT_THAT(std::string(OpenShardLimits{0, 1}.Validate().message()),
              HasSubstr("max_open_shards"));
  EXPECT_THAT(std::string(OpenShardLimits{1, 0}.Validate().message()),
              HasSubstr("shard_index_bytes"));
  EXPECT_TRUE(OpenShardLimits{}.Validate().ok());
}

stoker::v1::DatasetSpec PathsSpec(const std::string& path) {
  stoker::v1::DatasetSpec spec;
  spec.mutable_shards()->add_paths(path);
  return spec;
}

std::string FieldText(const SampleBuffer& sample, size_t f) {
  return std::string(sample.fields[f].begin(), sample.fields[f].end());
}

TEST(ShardSourceFieldsTest, TarSamplesCarryTheFieldsAskedForInOrder) {
  TempDir dir;
  WriteTar(dir.File("s.tar"), {{"a.jpg", "JPEG-A"},
                               {"a.txt", "caption \xc3\xa9"},
                               {"a.json", "{\"a\": 1}"},
                               {"b.json", "[]"},
                               {"b.txt", ""},
                               {"b.jpg", "JPEG-B"}});
  auto source = CreateSource(PathsSpec(dir.File("s.tar")), 0, DatasetIo::FromEnvironment(), false,
                             {"json", "text"});
  ASSERT_TRUE(source.ok()) << source.status();
  SampleBuffer sample;
  ASSERT_TRUE((*source)->Read(0, &sample).ok());
  ASSERT_EQ(sample.fields.size(), 2u);
  EXPECT_EQ(FieldText(sample, 0), "{\"a\": 1}");
  EXPECT_EQ(FieldText(sample, 1), "caption \xc3\xa9");
  ASSERT_TRUE((*source)->Read(1, &sample).ok());
  EXPECT_EQ(FieldText(sample, 0), "[]");
  EXPECT_EQ(FieldText(sample, 1), "");  // Present and empty: not missing.
}

TEST(ShardSourceFieldsTest, ASampleWithoutAFieldIsABadSampleMissingField) {
  TempDir dir;
  WriteTar(dir.File("s.tar"), {{"a.jpg", "JPEG-A"}, {"b.jpg", "JPEG-B"}, {"b.txt", "b"}});
  auto source =
      CreateSource(PathsSpec(dir.File("s.tar")), 0, DatasetIo::FromEnvironment(), false, {"text"});
  ASSERT_TRUE(source.ok());
  SampleBuffer sample;
  const absl::Status missing = (*source)->Read(0, &sample);
  EXPECT_EQ(missing.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(BadSampleReasonOf(missing), BadSampleReason::kMissingField);
  EXPECT_THAT(missing.message(), HasSubstr("s.tar record 0: no \"text\" field"));
  EXPECT_TRUE((*source)->Read(1, &sample).ok());
}

// A value over kMaxFieldValueBytes is a bad sample: the worker counts batches at that bound.
TEST(ShardSourceFieldsTest, AFieldValueOverTheBoundIsABadSampleTooLarge) {
  TempDir dir;
  WriteTar(dir.File("s.tar"), {{"a.jpg", "JPEG-A"},
                               {"a.txt", std::string(kMaxFieldValueBytes + 1, 'x')},
                               {"b.jpg", "JPEG-B"},
                               {"b.txt", std::string(kMaxFieldValueBytes, 'y')}});
  auto source =
      CreateSource(PathsSpec(dir.File("s.tar")), 0, DatasetIo::FromEnvironment(), false, {"text"});
  ASSERT_TRUE(source.ok());
  SampleBuffer sample;
  const absl::Status large = (*source)->Read(0, &sample);
  EXPECT_EQ(large.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(BadSampleReasonOf(large), BadSampleReason::kTooLarge);
  ASSERT_TRUE((*source)->Read(1, &sample).ok());
  EXPECT_EQ(FieldText(sample, 0).size(), kMaxFieldValueBytes);
}

// Jobs over the same tar with other fields each hold an index of their own fields.
TEST(ShardSourceFieldsTest, JobsWithOtherFieldsShareNoTarIndex) {
  TempDir dir;
  WriteTar(dir.File("s.tar"), {{"a.jpg", "JPEG-A"}, {"a.txt", "T"}, {"a.json", "J"}});
  const DatasetIo io = DatasetIo::FromEnvironment();
  const std::shared_ptr<OpenShardPool>& pool = io.shards;
  const std::vector<ShardRef> shards = {{dir.File("s.tar"), 1, 0}};
  ShardSource text(shards, {}, io, RemoteReads::kWholeShard, {"text"});
  ShardSource json(shards, {}, io, RemoteReads::kWholeShard, {"json"});
  ShardSource plain(shards, {}, io);
  SampleBuffer sample;
  ASSERT_TRUE(text.Read(0, &sample).ok());
  EXPECT_EQ(FieldText(sample, 0), "T");
  ASSERT_TRUE(json.Read(0, &sample).ok());
  EXPECT_EQ(FieldText(sample, 0), "J");
  ASSERT_TRUE(plain.Read(0, &sample).ok());
  EXPECT_TRUE(sample.fields.empty());
  EXPECT_EQ(pool->held(), 3u);
}

TEST(ShardSourceFieldsTest, StokerRecordsCarryFieldsInTheirMetadata) {
  TempDir dir;
  {
    auto writer = ShardWriter::Create(dir.File("s.stoker"));
    ASSERT_TRUE(writer.ok());
    const std::string metadata =
        EncodeRecordFields({{"text", "a caption"}, {"json", "{}"}}).value();
    ASSERT_TRUE((*writer)->Add("k0", 4, AsBytes("IMAGE-0"), metadata).ok());
    ASSERT_TRUE((*writer)->Add("k1", 5, AsBytes("IMAGE-1")).ok());  // No fields at all.
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  auto source = CreateSource(PathsSpec(dir.File("s.stoker")), 0, DatasetIo::FromEnvironment(),
                             false, {"text", "json"});
  ASSERT_TRUE(source.ok()) << source.status();
  SampleBuffer sample;
  ASSERT_TRUE((*source)->Read(0, &sample).ok());
  EXPECT_EQ(Encoded(sample), "IMAGE-0");
  EXPECT_EQ(sample.label, 4);
  EXPECT_EQ(FieldText(sample, 0), "a caption");
  EXPECT_EQ(FieldText(sample, 1), "{}");
  EXPECT_EQ(BadSampleReasonOf((*source)->Read(1, &sample)), BadSampleReason::kMissingField);
}

// A typed target's stored value may exceed 64 KiB (run-length masks), up to
// kMaxStoredTargetValueBytes; a pass-through value may not.
TEST(ShardSourceFieldsTest, TypedTargetsAreStoredValuesOfTheirOwnBound) {
  TempDir dir;
  {
    auto writer = ShardWriter::Create(dir.File("s.stoker"));
    ASSERT_TRUE(writer.ok());
    const std::string masks(kMaxFieldValueBytes + 1, 'm');
    const std::string over(kMaxStoredTargetValueBytes + 1, 'm');
    ASSERT_TRUE((*writer)
                    ->Add("k0", 0, AsBytes("IMAGE-0"),
                          EncodeRecordFields({{"masks", masks}, {"text", "t"}}).value())
                    .ok());
    ASSERT_TRUE((*writer)
                    ->Add("k1", 0, AsBytes("IMAGE-1"),
                          EncodeRecordFields({{"masks", over}, {"text", "t"}}).value())
                    .ok());
    ASSERT_TRUE((*writer)
                    ->Add("k2", 0, AsBytes("IMAGE-2"),
                          EncodeRecordFields({{"masks", masks}, {"text", masks}}).value())
                    .ok());
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  auto source = CreateSource(PathsSpec(dir.File("s.stoker")), 0, DatasetIo::FromEnvironment(),
                             false, {"masks", "text"});
  ASSERT_TRUE(source.ok()) << source.status();
  SampleBuffer sample;
  ASSERT_TRUE((*source)->Read(0, &sample).ok());
  EXPECT_EQ(sample.fields[0].size(), kMaxFieldValueBytes + 1);
  EXPECT_EQ(BadSampleReasonOf((*source)->Read(1, &sample)), BadSampleReason::kTooLarge);
  EXPECT_EQ(BadSampleReasonOf((*source)->Read(2, &sample)), BadSampleReason::kTooLarge);
}

TEST(ShardSourceFieldsTest, WebDatasetShardsHaveNoTypedTargetsButASemanticMask) {
  TempDir dir;
  WriteTar(dir.File("s.tar"), {{"a.jpg", "JPEG-A"}, {"a.boxes", "B"}, {"a.seg.png", "PNG-A"}});
  auto source = CreateSource(PathsSpec(dir.File("s.tar")), 0, DatasetIo::FromEnvironment());
  ASSERT_TRUE(source.ok());
  const absl::Status boxes = (*source)->CheckField("boxes");
  EXPECT_EQ(boxes.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(boxes.message(),
              HasSubstr("\"boxes\": the dataset has WebDataset shards; typed targets come from "
                        "stoker shards packed with them (stoker-pack --coco)"));
  EXPECT_TRUE((*source)->CheckField("text").ok());
  // A semantic mask's stored form is its PNG: the .seg.png, read under the typed name.
  EXPECT_TRUE((*source)->CheckField("semantic_mask").ok());
  auto with_mask = CreateSource(PathsSpec(dir.File("s.tar")), 0, DatasetIo::FromEnvironment(),
                                false, {"semantic_mask"});
  ASSERT_TRUE(with_mask.ok()) << with_mask.status();
  SampleBuffer sample;
  ASSERT_TRUE((*with_mask)->Read(0, &sample).ok());
  EXPECT_EQ(std::string(sample.fields[0].begin(), sample.fields[0].end()), "PNG-A");
}

TEST(ShardSourceFieldsTest, OnlyShardedDatasetsHaveSourceFields) {
  stoker::v1::JobSpec spec;
  stoker::v1::SyntheticSource* synthetic_spec = spec.mutable_dataset()->mutable_synthetic();
  synthetic_spec->set_num_samples(4);
  synthetic_spec->set_height(8);
  synthetic_spec->set_width(8);
  synthetic_spec->set_channels(3);
  synthetic_spec->set_num_classes(2);
  spec.add_fields("image");
  spec.add_fields("label");
  spec.add_fields("text");
  auto synthetic = CreateSource(spec.dataset(), 0, DatasetIo::FromEnvironment());
  ASSERT_TRUE(synthetic.ok());
  const absl::Status refused = CheckJobFields(spec, **synthetic);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(),
              HasSubstr("fields[2]: \"text\": this dataset's samples have only \"image\""));
  EXPECT_EQ(CreateSource(spec.dataset(), 0, DatasetIo::FromEnvironment(), false, {"text"})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stoker
