// EnableGrpcReadExperiments sets GRPC_EXPERIMENTS unless the environment already has it. Each
// case runs in a child process (EXPECT_EXIT, "threadsafe" style: the test binary started again),
// so that each sees a process where it has not run yet.

#include "common/read_wakeup_tuning.h"

#include <cstdlib>
#include <cstring>

#include "gtest/gtest.h"

namespace stoker {
namespace {

// Exits 0 when GRPC_EXPERIMENTS equals `expected` after EnableGrpcReadExperiments ran twice.
void RunAndExitWithWhetherSetTo(const char* expected) {
  EnableGrpcReadExperiments();
  EnableGrpcReadExperiments();
  const char* value = std::getenv("GRPC_EXPERIMENTS");
  std::exit(value != nullptr && std::strcmp(value, expected) == 0 ? 0 : 1);
}

TEST(ReadWakeupTuningTest, SetsTheExperimentsWhenTheEnvironmentHasNone) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        unsetenv("GRPC_EXPERIMENTS");
        RunAndExitWithWhetherSetTo("tcp_frame_size_tuning,tcp_rcv_lowat");
      },
      testing::ExitedWithCode(0), "");
}

TEST(ReadWakeupTuningTest, LeavesTheUsersChoiceEvenWhenEmpty) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("GRPC_EXPERIMENTS", "", 1);
        RunAndExitWithWhetherSetTo("");
      },
      testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        setenv("GRPC_EXPERIMENTS", "-tcp_rcv_lowat", 1);
        RunAndExitWithWhetherSetTo("-tcp_rcv_lowat");
      },
      testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace stoker
