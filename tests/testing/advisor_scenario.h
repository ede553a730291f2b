#ifndef STOKER_TESTS_TESTING_ADVISOR_SCENARIO_H_
#define STOKER_TESTS_TESTING_ADVISOR_SCENARIO_H_

// The advisor's scenario (how many workers a job needs), shared by its integration test (which
// checks the direction of the advice) and bench/advisor (which checks its accuracy against the
// wall clock): a blur job heavy enough that one worker thread cannot feed a consumer with a 1 ms
// step, consumed with a fixed step until the coordinator has measured advice.
// Functions are thread-compatible; each call uses only what it is given.

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "stoker/v1/coordinator.pb.h"
#include "stoker/v1/status.pb.h"
#include "tests/testing/test_cluster.h"

namespace stoker {

inline constexpr uint32_t kAdvisorBatchSize = 16;

// to_float and 20 blurs (ksize 11) of 64x64x3 synthetic images, batch kAdvisorBatchSize.
v1::JobSpec AdvisorBlurJob();

// Samples per CPU-second one producer thread makes of `spec` (about 0.5 s of thread CPU).
absl::StatusOr<double> MeasureProducerCapacity(const v1::JobSpec& spec);

// Consumes AdvisorBlurJob() as job `job_name` with a fixed `step` per batch until the
// coordinator's advice for it is measured (at least 3 s, at most 30 s); returns the job's status
// (advice().measured() false when time ran out), or the loader's first error.
absl::StatusOr<v1::JobStatus> ConsumeUntilAdvised(TestCluster& cluster, const std::string& job_name,
                                                  absl::Duration step);

}  // namespace stoker

#endif  // STOKER_TESTS_TESTING_ADVISOR_SCENARIO_H_
