#include "data/data_roots.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "data/manifest.h"
#include "data/storage.h"
#include "data/storage_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A root folder with a file, a subfolder, a symlink escaping to /etc and one staying inside.
class DataRootsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/stoker-roots-XXXXXX";
    dir_ = mkdtemp(tmpl);
    root_ = dir_ + "/root";
    ASSERT_EQ(mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir((root_ + "/sub").c_str(), 0755), 0);
    std::ofstream(root_ + "/sub/manifest.json") << "secret-first-line: root:*:19000\n";
    std::ofstream(dir_ + "/outside.txt") << "outside\n";
    ASSERT_EQ(symlink("/etc", (root_ + "/etc-link").c_str()), 0);
    ASSERT_EQ(symlink(root_.c_str(), (root_ + "/self-link").c_str()), 0);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  DataRoots Roots() {
    absl::StatusOr<DataRoots> roots = DataRoots::Create({root_, "s3://bucket/data/"});
    EXPECT_TRUE(roots.ok()) << roots.status();
    return *roots;
  }

  std::string dir_;
  std::string root_;
};

TEST_F(DataRootsTest, AllowsWhatLiesUnderARoot) {
  const DataRoots roots = Roots();
  EXPECT_TRUE(roots.Check(root_ + "/sub/manifest.json").ok());
  EXPECT_TRUE(roots.Check(root_ + "/sub/not-yet-there.shard").ok());
  EXPECT_TRUE(roots.Check(root_ + "/sub/*.shard").ok());
  EXPECT_TRUE(roots.Check(root_ + "/self-link/sub/manifest.json").ok());
  EXPECT_TRUE(roots.Check("s3://bucket/data/train/0.shard").ok());
  EXPECT_TRUE(DataRoots().Check("/etc/shadow").ok());  // No roots: anywhere.
}

TEST_F(DataRootsTest, RefusesEveryEscape) {
  const DataRoots roots = Roots();
  const auto denied = absl::StatusCode::kPermissionDenied;
  const auto invalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(roots.Check("/etc/shadow").code(), denied);
  EXPECT_EQ(roots.Check(dir_ + "/outside.txt").code(), denied);
  EXPECT_EQ(roots.Check(root_ + "/../outside.txt").code(), invalid);
  EXPECT_EQ(roots.Check(root_ + "/sub/../../outside.txt").code(), invalid);
  EXPECT_EQ(roots.Check(root_ + "/etc-link/shadow").code(), denied);  // Symlink out.
  EXPECT_EQ(roots.Check("/etc/*").code(), denied);                    // Glob outside.
  EXPECT_EQ(roots.Check(root_ + "x/sibling").code(), denied);         // Not a prefix trick.
  EXPECT_EQ(roots.Check("file:///etc/shadow").code(), invalid);
  EXPECT_EQ(roots.Check("FILE://" + root_ + "/sub/manifest.json").code(), invalid);
  EXPECT_EQ(roots.Check("s3://bucket/other/0.shard").code(), denied);
  EXPECT_EQ(roots.Check("s3://bucket/data/../secret").code(), invalid);
  EXPECT_EQ(roots.Check("https://host/data/0.shard").code(), denied);
  EXPECT_EQ(roots.Check("gs://bucket/data/0.shard").code(), invalid);
  EXPECT_THAT(std::string(roots.Check("/etc/shadow").message()), HasSubstr("--data-root"));
}

TEST_F(DataRootsTest, TheRootSlashAllowsEveryPathAndUrl) {
  absl::StatusOr<DataRoots> roots = DataRoots::Create({"/"});
  ASSERT_TRUE(roots.ok()) << roots.status();
  EXPECT_TRUE(roots->unrestricted());
  EXPECT_TRUE(roots->Check("/etc/shadow").ok());
  EXPECT_TRUE(roots->Check("s3://any-bucket/x").ok());
  EXPECT_FALSE(Roots().unrestricted());
}

// A refusal says the same whether the location outside the roots is missing, a file (of any
// size), a folder or a symlink: nothing about it leaks (docs/security.md, "Data roots").
TEST_F(DataRootsTest, ARefusalRevealsNothingAboutTheLocation) {
  StorageOptions options;
  options.data_roots = {root_};
  absl::StatusOr<std::shared_ptr<Storage>> storage =
      Storage::Create(options, AwsEnvironment::Real());
  ASSERT_TRUE(storage.ok()) << storage.status();
  const Storage& roots = **storage;
  const std::string secret = dir_ + "/shadow";
  auto refusals = [&] {
    std::vector<std::string> seen;
    for (const absl::Status& status :
         {ReadManifest(roots, secret).status(), roots.Open(secret).status(),
          roots.CheckLocation(secret), ExpandShardPaths(roots, {secret + "*"}).status()}) {
      EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
      seen.push_back(status.ToString());
    }
    return seen;
  };
  const std::vector<std::string> missing = refusals();
  EXPECT_THAT(missing[0], HasSubstr("data location " + secret + " is under no --data-root"));
  std::ofstream(secret) << "root:$6$salt$hash:19000:0:99999:7:::\n";
  EXPECT_EQ(refusals(), missing);
  ASSERT_EQ(unlink(secret.c_str()), 0);
  ASSERT_EQ(mkdir(secret.c_str(), 0755), 0);
  EXPECT_EQ(refusals(), missing);
  ASSERT_EQ(rmdir(secret.c_str()), 0);
  ASSERT_EQ(symlink("/etc/shadow", secret.c_str()), 0);
  EXPECT_EQ(refusals(), missing);
}

TEST_F(DataRootsTest, BadRootsNameTheField) {
  for (const std::string& bad : {std::string("relative/dir"), dir_ + "/missing",
                                 std::string("file:///data"), std::string("gs://bucket/")}) {
    absl::StatusOr<DataRoots> roots = DataRoots::Create({bad});
    EXPECT_EQ(roots.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(roots.status().message()), HasSubstr("data_roots")) << bad;
  }
}

// Through the storage: refused before anything is opened, and a file that is not a
// manifest is never quoted.
TEST_F(DataRootsTest, StorageRefusesBeforeReadingAndNeverQuotesContents) {
  StorageOptions options;
  options.data_roots = {root_};
  absl::StatusOr<std::shared_ptr<Storage>> storage =
      Storage::Create(options, AwsEnvironment::Real());
  ASSERT_TRUE(storage.ok()) << storage.status();
  const Storage& roots = **storage;
  EXPECT_EQ(ReadManifest(roots, "/etc/passwd").status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ReadManifest(roots, root_ + "/etc-link/passwd").status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ((*storage)->List("/etc").status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ExpandShardPaths(roots, {"/etc/*"}).status().code(),
            absl::StatusCode::kPermissionDenied);
  absl::StatusOr<v1::ShardManifest> not_a_manifest =
      ReadManifest(roots, root_ + "/sub/manifest.json");
  EXPECT_EQ(not_a_manifest.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(not_a_manifest.status().message()), Not(HasSubstr("root:*")));
  EXPECT_THAT(std::string(not_a_manifest.status().message()), Not(HasSubstr("secret")));
}

}  // namespace
}  // namespace stoker
