#include "data/tar_reader.h"

#include "data/testing/shard_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::stoker::testing::ReadFile;
using ::stoker::testing::TarEntry;
using ::stoker::testing::TempDir;
using ::stoker::testing::WriteFile;
using ::stoker::testing::WriteTar;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<TarEntry> Entries() {
  return {{"train/a.jpg", "JPEG-A"}, {"train/a.cls", "3\n"},
          {"train/b.cls", "5"},      {"train/b.png", "PNG-BB"},
          {"train/c.txt", "note"},   {"train/d.JPEG", std::string(700, 'd')},
          {"train/e.seg.png", "E"}};
}

TEST(TarReaderTest, GroupsFilesBySampleKey) {
  TempDir dir;
  WriteTar(dir.File("s.tar"), Entries());
  auto file = OpenLocalFile(dir.File("s.tar"));
  std::vector<std::string> keys;
  auto index = LoadTarShardIndex(**file, &keys);
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(index->damage, "");
  EXPECT_THAT(keys, ElementsAre("train/a", "train/b", "train/d"));
  ASSERT_EQ(index->samples.size(), 3u);
  EXPECT_EQ(index->samples[0].label, 3);
  EXPECT_EQ(index->samples[1].label, 5);
  EXPECT_EQ(index->samples[2].label, -1);  // No .cls.
  std::string bytes(index->samples[1].length, '\0');
  ASSERT_TRUE(
      (*file)
          ->ReadAt(index->samples[1].offset, bytes.size(), reinterpret_cast<uint8_t*>(bytes.data()))
          .ok());
  EXPECT_EQ(bytes, "PNG-BB");
  EXPECT_EQ(index->samples[2].length, 700u);
}

// Reads `location` of `file` as text.
std::string TarFieldText(const RandomAccessFile& file, const FieldLocation& location) {
  std::string bytes(location.length, '\0');
  EXPECT_TRUE(
      file.ReadAt(location.offset, bytes.size(), reinterpret_cast<uint8_t*>(bytes.data())).ok());
  return bytes;
}

TEST(TarReaderTest, IndexesOnlyTheFieldsAskedForWhereverTheyLie) {
  TempDir dir;
  // b's field files come before its image; c has no image; d lacks both fields.
  WriteTar(dir.File("s.tar"), {{"train/a.jpg", "JPEG-A"},
                               {"train/a.txt", "caption a"},
                               {"train/a.seg.png", "MASK-A"},
                               {"train/a.json", "{}"},
                               {"train/b.seg.png", "MASK-B"},
                               {"train/b.txt", "caption b"},
                               {"train/b.png", "PNG-B"},
                               {"train/c.txt", "orphan"},
                               {"train/d.jpg", "JPEG-D"}});
  auto file = OpenLocalFile(dir.File("s.tar"));
  auto index = LoadTarShardIndex(**file, nullptr, {"txt", "seg.png"});
  ASSERT_TRUE(index.ok()) << index.status();
  ASSERT_EQ(index->samples.size(), 3u);
  ASSERT_EQ(index->field_count, 2u);
  ASSERT_EQ(index->fields.size(), 6u);  // Two per sample: the .json is not kept.
  EXPECT_EQ(TarFieldText(**file, index->fields[0]), "caption a");
  EXPECT_EQ(TarFieldText(**file, index->fields[1]), "MASK-A");
  EXPECT_EQ(TarFieldText(**file, index->fields[2]), "caption b");
  EXPECT_EQ(TarFieldText(**file, index->fields[3]), "MASK-B");
  EXPECT_EQ(index->fields[4].offset, FieldLocation::kAbsent);
  EXPECT_EQ(index->fields[5].offset, FieldLocation::kAbsent);
}

TEST(TarReaderTest, NoFieldsAskedKeepsNoFieldLocations) {
  TempDir dir;
  WriteTar(dir.File("s.tar"), Entries());
  auto file = OpenLocalFile(dir.File("s.tar"));
  auto index = LoadTarShardIndex(**file);
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->field_count, 0u);
  EXPECT_TRUE(index->fields.empty());
}

TEST(TarReaderTest, TruncatedArchiveKeepsWholeFilesBeforeTheCut) {
  TempDir dir;
  WriteTar(dir.File("s.tar"), Entries());
  const std::string bytes = ReadFile(dir.File("s.tar"));
  // Entries are 1024 bytes each except d (512 + 1024); cut inside d's data.
  WriteFile(dir.File("s.tar"), bytes.substr(0, 5 * 1024 + 600));
  auto file = OpenLocalFile(dir.File("s.tar"));
  auto index = LoadTarShardIndex(**file);
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->samples.size(), 2u);
  EXPECT_THAT(index->damage, HasSubstr("damaged tar entry at offset 5120"));
}

TEST(TarReaderTest, IsTarShard) {
  EXPECT_TRUE(IsTarShard("http://host/x/train-0001.tar"));
  EXPECT_FALSE(IsTarShard("/data/shard-00001.stoker"));
}

}  // namespace
}  // namespace stoker
