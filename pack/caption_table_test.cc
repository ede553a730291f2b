#include "pack/caption_table.h"

#include <string>

#include "data/storage_backend.h"
#include "data/testing/shard_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::stoker::testing::TempDir;
using ::stoker::testing::WriteFile;
using ::testing::HasSubstr;

TEST(CaptionTableTest, PathsResolveLikeTheFileListAndCaptionsAreTheRestOfTheLine) {
  TempDir dir;
  WriteFile(dir.File("pairs.tsv"),
            "# path\tcaption\n"
            "cats/a.jpg\tun chat \xc3\xa9tonn\xc3\xa9\twith a tab\r\n"
            "\n"
            "./dogs/../dogs/b.jpg\t\n"
            "/abs/c.png\tthird\n");
  auto table = ReadCaptionTable(*Storage::FromEnvironment(), dir.File("pairs.tsv"));
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_NE(table->Find(dir.File("cats/a.jpg")), nullptr);
  EXPECT_EQ(*table->Find(dir.File("cats/a.jpg")), "un chat \xc3\xa9tonn\xc3\xa9\twith a tab");
  ASSERT_NE(table->Find(dir.File("dogs/b.jpg")), nullptr);
  EXPECT_EQ(*table->Find(dir.File("dogs/b.jpg")), "");
  ASSERT_NE(table->Find("/abs/c.png"), nullptr);
  EXPECT_EQ(table->Find(dir.File("cats/missing.jpg")), nullptr);
}

TEST(CaptionTableTest, MalformedLinesAndRepeatedPathsNameTheLine) {
  TempDir dir;
  WriteFile(dir.File("no_tab.tsv"), "a.jpg\tfine\nb.jpg caption\n");
  const absl::Status no_tab =
      ReadCaptionTable(*Storage::FromEnvironment(), dir.File("no_tab.tsv")).status();
  EXPECT_EQ(no_tab.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_tab.message(), HasSubstr("no_tab.tsv:2: expected \"path<TAB>caption\""));
  WriteFile(dir.File("twice.tsv"), "a.jpg\tone\n./a.jpg\ttwo\n");
  const absl::Status twice =
      ReadCaptionTable(*Storage::FromEnvironment(), dir.File("twice.tsv")).status();
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(twice.message(), HasSubstr("twice.tsv:2: ./a.jpg is listed twice"));
}

}  // namespace
}  // namespace stoker
