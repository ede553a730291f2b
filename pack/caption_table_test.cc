#include "pack/caption_table.h"

#include <string>

#include "absl/strings/str_cat.h"
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
  auto table = ReadCaptionTable(*Storage::FromEnvironment(), dir.File("pairs.tsv"),
                                CaptionTableFormat::kTsv);
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
  const absl::Status no_tab = ReadCaptionTable(*Storage::FromEnvironment(), dir.File("no_tab.tsv"),
                                               CaptionTableFormat::kTsv)
                                  .status();
  EXPECT_EQ(no_tab.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_tab.message(), HasSubstr("no_tab.tsv:2: expected \"path<TAB>caption\""));
  WriteFile(dir.File("twice.tsv"), "a.jpg\tone\n./a.jpg\ttwo\n");
  const absl::Status twice =
      ReadCaptionTable(*Storage::FromEnvironment(), dir.File("twice.tsv"), CaptionTableFormat::kTsv)
          .status();
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(twice.message(), HasSubstr("twice.tsv:2: ./a.jpg is listed twice"));
}

TEST(CaptionTableTest, CsvFieldsInQuotesHoldCommasQuotesAndNewlines) {
  TempDir dir;
  WriteFile(dir.File("pairs.csv"),
            "\xEF\xBB\xBFpath,caption\r\n"  // As spreadsheets save it: a byte order mark.
            "cats/a.jpg,\"a cat, sitting\"\r\n"
            "\r\n"
            "\"cats/b,c.jpg\",\"she said \"\"hi\"\"\"\n"
            "dogs/d.jpg,\"two\nlines\"\n"
            "dogs/e.jpg,\n"
            "dogs/f.jpg,plain words");
  auto table = ReadCaptionTable(*Storage::FromEnvironment(), dir.File("pairs.csv"),
                                CaptionTableFormat::kCsv);
  ASSERT_TRUE(table.ok()) << table.status();
  const auto caption = [&](const char* path) {
    const std::string* found = table->Find(dir.File(path));
    return found == nullptr ? std::string("(none)") : *found;
  };
  EXPECT_EQ(caption("cats/a.jpg"), "a cat, sitting");
  EXPECT_EQ(caption("cats/b,c.jpg"), "she said \"hi\"");
  EXPECT_EQ(caption("dogs/d.jpg"), "two\nlines");
  EXPECT_EQ(caption("dogs/e.jpg"), "");
  EXPECT_EQ(caption("dogs/f.jpg"), "plain words");
  EXPECT_EQ(caption("path"), "(none)");  // The header is not a row.
  // Without a header the first row is a row; the unknown-image check names its line.
  WriteFile(dir.File("bare.csv"), "a.jpg,first\nb.jpg,second\n");
  auto bare =
      ReadCaptionTable(*Storage::FromEnvironment(), dir.File("bare.csv"), CaptionTableFormat::kCsv);
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(*bare->Find(dir.File("a.jpg")), "first");
  EXPECT_TRUE(bare->CheckListedAmong({dir.File("a.jpg"), dir.File("./b.jpg")}).ok());
  const absl::Status unknown = bare->CheckListedAmong({dir.File("a.jpg")});
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.message(),
              HasSubstr("bare.csv:2: unknown image b.jpg (not among the inputs)"));
}

struct BadCsvCase {
  const char* text;
  const char* message;  // After "bad.csv:".
};

class BadCsvTest : public ::testing::TestWithParam<BadCsvCase> {};

TEST_P(BadCsvTest, IsRefusedNamingTheFileTheLineAndTheReason) {
  TempDir dir;
  WriteFile(dir.File("bad.csv"), GetParam().text);
  const absl::Status status =
      ReadCaptionTable(*Storage::FromEnvironment(), dir.File("bad.csv"), CaptionTableFormat::kCsv)
          .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("bad.csv:", GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    EveryReason, BadCsvTest,
    ::testing::Values(BadCsvCase{"a.jpg,fine\nb.jpg,\"never closed\nc.jpg,x\n",
                                 "2: unterminated quote"},
                      BadCsvCase{"a.jpg,fine\n\"b\nc.jpg\"\n", "2: missing caption"},
                      BadCsvCase{"a.jpg,one,two\n", "1: 3 fields, expected two (path,caption)"},
                      BadCsvCase{"a.jpg,\"two\nlines\"\nb.jpg,say \"hi\"\n",
                                 "3: a quote inside an unquoted field"},
                      BadCsvCase{"a.jpg,\"closed\" then more\n", "1: text after a closing quote"},
                      BadCsvCase{",caption\n", "1: empty path"},
                      BadCsvCase{"a.jpg,one\r\n./a.jpg,two\r\n", "2: ./a.jpg is listed twice"}));

TEST(CaptionTableTest, TheFormatIsTheFlagsElseTheExtensions) {
  EXPECT_EQ(*CaptionTableFormatOf("", "s3://b/pairs.CSV"), CaptionTableFormat::kCsv);
  EXPECT_EQ(*CaptionTableFormatOf("", "pairs.tsv"), CaptionTableFormat::kTsv);
  EXPECT_EQ(*CaptionTableFormatOf("", "pairs.txt"), CaptionTableFormat::kTsv);
  EXPECT_EQ(*CaptionTableFormatOf("csv", "pairs.txt"), CaptionTableFormat::kCsv);
  EXPECT_EQ(*CaptionTableFormatOf("tsv", "pairs.csv"), CaptionTableFormat::kTsv);
  const absl::Status bad = CaptionTableFormatOf("xlsx", "pairs.csv").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("captions_format: must be csv or tsv"));
}

}  // namespace
}  // namespace stoker
