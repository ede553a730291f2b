// What KEDA's scaler is told: the workers a scope needs, held by hysteresis and a cool-down.
#include "coordinator/scale_target.h"

#include "common/clock.h"
#include "coordinator/status_matchers_for_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

void AddJob(pb::GetStatusResponse* status, const std::string& name, bool measured, uint32_t now,
            uint32_t desired, bool finished = false) {
  pb::JobStatus* job = status->add_jobs();
  job->set_name(name);
  job->set_state(finished ? pb::JOB_STATE_FINISHED : pb::JOB_STATE_RUNNING);
  job->mutable_advice()->set_measured(measured);
  job->mutable_advice()->set_workers_now(now);
  job->mutable_advice()->set_workers_desired(desired);
}

void AddWorkers(pb::GetStatusResponse* status, const std::string& pool, int n) {
  for (int i = 0; i < n; ++i) status->add_workers()->mutable_info()->set_pool(pool);
}

TEST(WorkersWantedTest, MeasuredJobsAddUpAndPoolsGetWhatOthersLeave) {
  pb::GetStatusResponse status;
  AddWorkers(&status, "cpu-a", 2);
  AddWorkers(&status, "cpu-b", 1);
  AddJob(&status, "a", true, 3, 5);
  AddJob(&status, "b", true, 3, 2);
  AddJob(&status, "done", true, 3, 9, /*finished=*/true);  // needs nothing
  EXPECT_EQ(WorkersWanted(status, {}), 7u);
  EXPECT_EQ(WorkersWanted(status, {"cpu-a", "", ""}), 6u);  // 7 less cpu-b's one
  EXPECT_EQ(WorkersWanted(status, {"cpu-b", "", ""}), 5u);  // 7 less cpu-a's two
  EXPECT_EQ(WorkersWanted(status, {"", "b", ""}), 2u);
  EXPECT_EQ(WorkersWanted(status, {"cpu-b", "b", ""}), 0u);  // cpu-a's two cover job b
}

TEST(WorkersWantedTest, ATenantScopeCountsOnlyThatTenantsJobs) {
  pb::GetStatusResponse status;
  AddJob(&status, "train", true, 1, 5);
  status.mutable_jobs(0)->set_tenant("a");
  AddJob(&status, "train", true, 1, 2);
  status.mutable_jobs(1)->set_tenant("b");
  EXPECT_EQ(WorkersWanted(status, {}), 7u);  // no tenant named: every tenant, as before
  EXPECT_EQ(WorkersWanted(status, {"", "", "a"}), 5u);
  EXPECT_EQ(WorkersWanted(status, {"", "train", "b"}), 2u);
  EXPECT_EQ(WorkersWanted(status, {"", "", "c"}), 0u);
}

TEST(WorkersWantedTest, UnmeasuredJobsKeepWhatTheyHaveAndStartOne) {
  pb::GetStatusResponse status;
  AddJob(&status, "new", false, 0, 0);
  EXPECT_EQ(WorkersWanted(status, {}), 1u);  // from zero: one worker to measure with
  AddWorkers(&status, "", 3);
  status.mutable_jobs(0)->mutable_advice()->set_workers_now(3);
  EXPECT_EQ(WorkersWanted(status, {}), 3u);
  status.mutable_jobs(0)->set_state(pb::JOB_STATE_FINISHED);
  EXPECT_EQ(WorkersWanted(status, {}), 0u);  // no running job: scale to zero
  EXPECT_EQ(WorkersWanted(pb::GetStatusResponse(), {}), 0u);
}

class ScaleDeciderTest : public ::testing::Test {
 protected:
  static ScaleDeciderConfig Config() {
    ScaleDeciderConfig config;
    config.hysteresis_workers = 2;
    config.cooldown = absl::Seconds(60);
    return config;
  }
  uint32_t Decide(uint32_t wanted) { return *decider_.Decide(scope_, wanted); }

  FakeClock clock_;
  ScaleDecider decider_{Config(), &clock_};
  const ScaleScope scope_{"cpu-a", "", ""};
};

TEST_F(ScaleDeciderTest, RisesAtOnceFallsAfterTheCooldownBeyondTheHysteresis) {
  EXPECT_EQ(Decide(4), 4u);
  EXPECT_EQ(Decide(6), 6u);  // a rise: at once
  EXPECT_EQ(Decide(5), 6u);  // a fall of 1 < hysteresis 2: held
  clock_.Advance(absl::Seconds(30));
  EXPECT_EQ(Decide(3), 6u);  // a fall within the cool-down: held
  clock_.Advance(absl::Seconds(30));
  EXPECT_EQ(Decide(5), 6u);  // cooled, but a fall of 1: held
  EXPECT_EQ(Decide(3), 3u);  // cooled and a fall of 3: taken
}

TEST_F(ScaleDeciderTest, NeverReversesWithinTheCooldown) {
  // Demand that flips every 10 s between 2 and 8 workers: one change per cool-down at most,
  // and never a rise right after a fall.
  EXPECT_EQ(Decide(8), 8u);
  clock_.Advance(absl::Seconds(60));
  EXPECT_EQ(Decide(2), 2u);
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(absl::Seconds(10));
    EXPECT_EQ(Decide(i % 2 == 0 ? 8 : 2), 2u) << i;
  }
  clock_.Advance(absl::Seconds(10));  // 60 s since the fall
  EXPECT_EQ(Decide(8), 8u);
}

TEST_F(ScaleDeciderTest, FallsToZeroWhateverTheHysteresis) {
  EXPECT_EQ(Decide(1), 1u);
  clock_.Advance(absl::Seconds(60));
  EXPECT_EQ(Decide(0), 0u);
  EXPECT_EQ(Decide(1), 0u);  // a rise right after the fall waits out the cool-down
  clock_.Advance(absl::Seconds(60));
  EXPECT_EQ(Decide(1), 1u);
}

TEST(ScaleDeciderLimitsTest, BoundsTheScopesAndValidates) {
  FakeClock clock;
  ScaleDecider decider(ScaleDeciderConfig(), &clock);
  for (size_t i = 0; i < kMaxScaleScopes; ++i) {
    ASSERT_TRUE(decider.Decide({"", std::to_string(i), ""}, 1).ok());
  }
  EXPECT_THAT(decider.Decide({"", "one-more", ""}, 1),
              StatusIs(absl::StatusCode::kResourceExhausted, ::testing::HasSubstr("scopes")));
  EXPECT_TRUE(decider.Decide({"", "0", ""}, 2).ok());  // known scopes still answer
  ScaleDeciderConfig bad;
  bad.hysteresis_workers = 0;
  EXPECT_THAT(bad.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                       ::testing::HasSubstr("hysteresis_workers")));
  bad = ScaleDeciderConfig();
  bad.cooldown = absl::Seconds(-1);
  EXPECT_THAT(bad.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("cooldown")));
}

}  // namespace
}  // namespace stoker
