// ProbeRetireScheduler (probe_retire_scheduler.h) on its own: which jobs are due for a dataset
// probe or for retirement at a given time, and the probe errors it keeps.

#include "coordinator/probe_retire_scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/time/time.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pointee;

constexpr absl::Duration kIdle = absl::Minutes(5);
const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);

TEST(ProbeRetireSchedulerTest, AJobIsIdleOnceNoClientWasHeardForTheTimeout) {
  ProbeRetireScheduler scheduler(kIdle);
  scheduler.Heard(1, kStart);
  scheduler.Heard(2, kStart + absl::Minutes(1));
  EXPECT_THAT(scheduler.IdleJobs(kStart + kIdle - absl::Milliseconds(1)), IsEmpty());
  EXPECT_THAT(scheduler.IdleJobs(kStart + kIdle), ElementsAre(1));
  scheduler.Heard(1, kStart + absl::Minutes(2));  // a heartbeat pushes the retirement back
  EXPECT_THAT(scheduler.IdleJobs(kStart + kIdle + absl::Minutes(1)), ElementsAre(2));
  scheduler.Forget(2);
  EXPECT_THAT(scheduler.IdleJobs(kStart + kIdle + absl::Minutes(1)), IsEmpty());
}

TEST(ProbeRetireSchedulerTest, RecoveredJobsCountAsHeardAndOnlyUnfinishedOnesAreProbed) {
  ProbeRetireScheduler scheduler(kIdle);
  scheduler.Recovered(1, /*finished=*/false, kStart);
  scheduler.Recovered(2, /*finished=*/true, kStart);
  EXPECT_THAT(scheduler.ProbesDue(kStart), ElementsAre(1));
  EXPECT_THAT(scheduler.IdleJobs(kStart + kIdle - absl::Milliseconds(1)), IsEmpty());
  EXPECT_THAT(scheduler.IdleJobs(kStart + kIdle), ElementsAre(1, 2));
}

TEST(ProbeRetireSchedulerTest, AFailedProbeKeepsItsErrorAndIsRetriedAfterTheInterval) {
  ProbeRetireScheduler scheduler(kIdle);
  scheduler.Recovered(1, /*finished=*/false, kStart);
  scheduler.RecordProbe(1, "job 1: its dataset cannot be opened", kStart);
  EXPECT_THAT(scheduler.DataError(1), Pointee(std::string("job 1: its dataset cannot be opened")));
  const absl::Time next = kStart + ProbeRetireScheduler::kProbeInterval;
  EXPECT_THAT(scheduler.ProbesDue(next - absl::Milliseconds(1)), IsEmpty());
  EXPECT_THAT(scheduler.ProbesDue(next), ElementsAre(1));
  scheduler.RecordProbe(1, "", next);  // it opens again: cleared, and never probed again
  EXPECT_EQ(scheduler.DataError(1), nullptr);
  EXPECT_THAT(scheduler.ProbesDue(next + absl::Hours(1)), IsEmpty());
}

TEST(ProbeRetireSchedulerTest, ForgettingAJobDropsItsProbeAndItsError) {
  ProbeRetireScheduler scheduler(kIdle);
  scheduler.Recovered(1, /*finished=*/false, kStart);
  scheduler.RecordProbe(1, "job 1: its dataset changed", kStart);
  scheduler.Forget(1);
  EXPECT_EQ(scheduler.DataError(1), nullptr);
  EXPECT_THAT(scheduler.ProbesDue(kStart + absl::Hours(1)), IsEmpty());
  EXPECT_THAT(scheduler.IdleJobs(kStart + absl::Hours(1)), IsEmpty());
}

}  // namespace
}  // namespace stoker
