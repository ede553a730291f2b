// The main() of every stoker_cc_test (cmake/StokerHelpers.cmake): runs the tests like
// GTest::gtest_main, but a binary none of whose tests failed and at least one of whose tests
// called GTEST_SKIP exits 77, which CTest shows as skipped (SKIP_RETURN_CODE), never as passed.
// A failure stays a failure whatever else was skipped.

#include <cstdio>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

constexpr int kSkipReturnCode = 77;

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleMock(&argc, argv);
  const int result = RUN_ALL_TESTS();
  if (result != 0) return result;
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  if (unit.skipped_test_count() > 0) {
    std::fprintf(stderr, "%d of %d tests skipped (reasons above): exit %d, shown as skipped\n",
                 unit.skipped_test_count(), unit.total_test_count(), kSkipReturnCode);
    return kSkipReturnCode;
  }
  return 0;
}
