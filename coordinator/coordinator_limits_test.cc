// The coordinator's limits on what a caller can make it hold (docs/security.md, "Limits"):
// each refusal has its exact code and names its flag.

#include <string>

#include "common/clock.h"
#include "coordinator/coordinator.h"
#include "coordinator/coordinator_for_test.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

stoker::v1::OpenJobRequest Request(const std::string& name) {
  stoker::v1::OpenJobRequest request;
  request.set_name(name);
  *request.mutable_spec() = SmallJobSpec();
  return request;
}

TEST(CoordinatorLimitsTest, JobsBeyondMaxJobsAreResourceExhausted) {
  FakeClock clock;
  CoordinatorConfig config = TestCoordinatorConfig();
  config.max_jobs = 2;
  Coordinator coordinator(config, &clock);
  EXPECT_THAT(coordinator.OpenJob(Request("a")), IsOk());
  EXPECT_THAT(coordinator.OpenJob(Request("b")), IsOk());
  EXPECT_THAT(coordinator.OpenJob(Request("c")),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("--max-jobs=2")));
  // Reopening a held job is no new job.
  EXPECT_THAT(coordinator.OpenJob(Request("a")), IsOk());
}

TEST(CoordinatorLimitsTest, LongNamesAndPipelinesAreInvalidArgument) {
  FakeClock clock;
  CoordinatorConfig config = TestCoordinatorConfig();
  config.max_job_name_bytes = 8;
  config.max_pipeline_ops = 3;
  Coordinator coordinator(config, &clock);
  EXPECT_THAT(coordinator.OpenJob(Request("12345678")), IsOk());
  EXPECT_THAT(coordinator.OpenJob(Request("123456789")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("name: 9 bytes, over the limit of 8 (--max-job-name-bytes)")));
  stoker::v1::OpenJobRequest request = Request("ops");
  for (int i = 0; i < 3; ++i)
    request.mutable_spec()->mutable_pipeline()->add_ops()->mutable_horizontal_flip();
  EXPECT_THAT(
      coordinator.OpenJob(request),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("spec.pipeline.ops: 4 ops, over the limit of 3 (--max-pipeline-ops)")));
}

}  // namespace
}  // namespace stoker
