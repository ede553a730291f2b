// The advisor end to end (issue: knowing how many workers a job needs): a consumer with a fixed
// step, fed first by too few workers and then by too many; the advice must point the right way.
// How close it comes to the ideal is a wall-clock measure: bench/advisor (scripts/bench.sh
// advisor), not a test.

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/advisor_scenario.h"
#include "tests/testing/test_cluster.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::HasSubstr;

pb::JobAdvice Advise(int workers, absl::Duration step, const std::string& job_name) {
  auto cluster = TestCluster::Start(workers);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return pb::JobAdvice();
  absl::StatusOr<pb::JobStatus> status = ConsumeUntilAdvised(**cluster, job_name, step);
  EXPECT_TRUE(status.ok()) << status.status();
  if (!status.ok()) return pb::JobAdvice();
  EXPECT_TRUE(status->advice().measured()) << status->advice().explanation();
  ::testing::Test::RecordProperty("advice", status->advice().explanation());
  return status->advice();
}

TEST(AdvisorIntegrationTest, TooFewWorkersAsksForMore) {
  const pb::JobAdvice advice = Advise(/*workers=*/1, absl::Milliseconds(1), "too-few");
  EXPECT_GT(advice.workers_desired(), 1u) << advice.explanation();
  EXPECT_THAT(advice.explanation(), HasSubstr(": add "));
}

TEST(AdvisorIntegrationTest, IdleWorkersAskForFewer) {
  const pb::JobAdvice advice = Advise(/*workers=*/3, absl::Milliseconds(20), "too-many");
  EXPECT_LT(advice.workers_desired(), 3u) << advice.explanation();
  EXPECT_THAT(advice.explanation(), HasSubstr("remove"));
}

}  // namespace
}  // namespace stoker
