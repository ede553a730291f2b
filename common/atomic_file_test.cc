#include "common/atomic_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream read;
  read << in.rdbuf();
  return read.str();
}

bool Exists(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

std::string Fresh(const std::string& name) {
  const std::string path = std::string(::testing::TempDir()) + "/atomic_file_test_" + name;
  std::remove(path.c_str());
  std::remove((path + ".tmp").c_str());
  return path;
}

TEST(ReplaceFileTest, EveryDurabilityReplacesTheWholeFileAndLeavesNoTemporary) {
  for (Durability durability : {Durability::kAtomic, Durability::kSynced, Durability::kDurable}) {
    const std::string path = Fresh("replace");
    ASSERT_TRUE(ReplaceFile(path, "a longer first content", durability).ok());
    ASSERT_TRUE(ReplaceFile(path, std::string("second\0bytes", 12), durability).ok());
    EXPECT_EQ(Read(path), std::string("second\0bytes", 12));
    EXPECT_FALSE(Exists(path + ".tmp"));
  }
}

TEST(ReplaceFileTest, AMissingFolderIsNotFoundNamingThePath) {
  const absl::Status status =
      ReplaceFile("/nonexistent-stoker-dir/token", "x", Durability::kDurable);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("cannot create /nonexistent-stoker-dir/token.tmp"));
}

// A rename that fails (the target is a folder) leaves the target as it was and no temporary.
TEST(CommitReplacementTest, AFailedRenameRemovesTheTemporary) {
  const std::string target = Fresh("folder_target");
  ASSERT_EQ(::mkdir(target.c_str(), 0755), 0);
  const std::string temp = Fresh("streamed.part");
  std::ofstream(temp) << "streamed";
  const absl::Status status = CommitReplacement(temp, target, Durability::kSynced);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("cannot rename onto " + target));
  EXPECT_FALSE(Exists(temp));
  struct stat info;
  ASSERT_EQ(::stat(target.c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
  ::rmdir(target.c_str());
}

TEST(CommitReplacementTest, MovesAStreamedFileIntoPlace) {
  for (Durability durability : {Durability::kAtomic, Durability::kSynced, Durability::kDurable}) {
    const std::string path = Fresh("committed");
    const std::string temp = Fresh("committed.part");
    std::ofstream(temp) << "streamed";
    ASSERT_TRUE(CommitReplacement(temp, path, durability).ok());
    EXPECT_EQ(Read(path), "streamed");
    EXPECT_FALSE(Exists(temp));
  }
  const absl::Status missing =
      CommitReplacement(Fresh("never-written"), Fresh("never"), Durability::kDurable);
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
}

TEST(ErrnoStatusTest, CodesByMeaning) {
  EXPECT_EQ(ErrnoStatus(ENOENT, "open", "/p").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ErrnoStatus(EACCES, "open", "/p").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ErrnoStatus(EROFS, "open", "/p").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ErrnoStatus(ENOSPC, "write", "/p").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ErrnoStatus(EDQUOT, "write", "/p").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ErrnoStatus(EIO, "fsync", "/p").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ErrnoStatus(EIO, "fsync", "/p").message(), "cannot fsync /p: Input/output error");
}

}  // namespace
}  // namespace stoker
