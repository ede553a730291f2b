#include "common/text_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace stoker {
namespace {

using ::testing::HasSubstr;

TEST(WriteTextFileTest, ReplacesTheFile) {
  const std::string path = std::string(::testing::TempDir()) + "/text_file_test.txt";
  ASSERT_TRUE(WriteTextFile("--output", path, "a longer first text").ok());
  ASSERT_TRUE(WriteTextFile("--output", path, "second").ok());
  std::ifstream in(path);
  std::stringstream read;
  read << in.rdbuf();
  EXPECT_EQ(read.str(), "second");
}

TEST(WriteTextFileTest, AnUnwritablePathNamesTheFlag) {
  const absl::Status status = WriteTextFile("--html", "/nonexistent-dir/page.html", "x");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("--html: cannot write /nonexistent-dir/page.html"));
}

}  // namespace
}  // namespace stoker
