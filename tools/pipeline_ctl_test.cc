// `stoker-ctl pipeline explain` and `pipeline ops`: the commands' exit codes.
#include "tools/pipeline_ctl.h"

#include <string>
#include <vector>

#include "common/flags.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

int RunCtl(std::vector<std::string> args) {
  args.insert(args.begin(), {"stoker-ctl", "pipeline"});
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  return RunPipelineCommand(static_cast<int>(argv.size()), argv.data());
}

TEST(PipelineCtlTest, ExitCodes) {
  EXPECT_EQ(RunCtl({"explain", "to_float", "--input=8x8x3", "--runs=1"}), 0);
  EXPECT_EQ(
      RunCtl({"explain", "--runs=0", "to_float, normalize(mean=[0], std=[1])", "--input=8x8x1"}),
      0);
  EXPECT_EQ(RunCtl({"explain", "blur(ksize=3)"}), kExitBadFlags);  // unknown op
  EXPECT_EQ(RunCtl({"explain", "to_float", "--input=8x8"}), kExitBadFlags);
  EXPECT_EQ(RunCtl({"explain", "to_float", "--layout=nhwc"}), kExitBadFlags);
  EXPECT_EQ(RunCtl({"explain"}), kExitBadFlags);               // no text
  EXPECT_EQ(RunCtl({"describe", "to_float"}), kExitBadFlags);  // unknown subcommand
  EXPECT_EQ(RunCtl({"explain", "center_crop(height=20, width=20)", "--input=8x8x3"}),
            kExitBadFlags);  // compile-time: the decoded input is too small
  EXPECT_EQ(
      RunCtl({"explain", "decode, center_crop(height=20, width=20)", "--input=8x8x3", "--runs=0"}),
      1);  // found when running on the synthetic JPEG
}

TEST(PipelineCtlTest, OpsExitCodes) {
  EXPECT_EQ(RunCtl({"ops"}), 0);
  EXPECT_EQ(RunCtl({"ops", "--markdown"}), 0);
  EXPECT_EQ(RunCtl({"ops", "--update=/nonexistent/augmentations.md"}), kExitBadFlags);
  EXPECT_EQ(RunCtl({"ops", "--bogus"}), kExitBadFlags);
}

}  // namespace
}  // namespace stoker
