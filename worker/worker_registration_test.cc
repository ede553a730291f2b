// Registration: what the worker announces, the id it is given, and when it registers again.

#include "worker/worker_registration.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "coordinator/status_matchers_for_test.h"
#include "worker/fake_coordinator_for_test.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::ElementsAre;
using worker_testing::FakeCoordinator;

WorkerConfig RegistrationConfig() {
  WorkerConfig config;
  config.threads = 3;
  config.pool = "spot";
  return config;
}

class WorkerRegistrationTest : public ::testing::Test {
 protected:
  WorkerRegistrationTest() {
    registration_.SetObserver([this](bool registered) { seen_.push_back(registered); });
    registration_.set_advertise_address("10.0.0.1:7000");
  }

  const WorkerConfig config_ = RegistrationConfig();
  FakeCoordinator coordinator_;
  std::vector<uint64_t> ids_;  // what on_registered heard
  std::vector<bool> seen_;     // what the observer heard
  WorkerRegistration registration_{config_, &coordinator_,
                                   [this](uint64_t worker_id) { ids_.push_back(worker_id); }};
};

TEST_F(WorkerRegistrationTest, RegistersAsConfiguredAndKeepsTheIdAndInterval) {
  EXPECT_FALSE(registration_.registered());
  ASSERT_THAT(registration_.Register(), IsOk());
  const pb::RegisterWorkerRequest request = coordinator_.last_registration();
  EXPECT_EQ(request.address(), "10.0.0.1:7000");
  EXPECT_EQ(request.cores(), 3u);
  EXPECT_EQ(request.pool(), "spot");
  EXPECT_TRUE(registration_.registered());
  EXPECT_EQ(registration_.worker_id(), 7u);
  EXPECT_EQ(registration_.heartbeat_interval(), absl::Seconds(1));
  EXPECT_THAT(ids_, ElementsAre(7u));
  EXPECT_THAT(seen_, ElementsAre(true));
}

TEST_F(WorkerRegistrationTest, ARefusedRegistrationIsTheCoordinatorsError) {
  coordinator_.FailRegistrations(absl::UnavailableError("coordinator restarting"));
  EXPECT_THAT(registration_.Register(),
              StatusIs(absl::StatusCode::kUnavailable, testing::HasSubstr("restarting")));
  EXPECT_FALSE(registration_.registered());
  EXPECT_TRUE(seen_.empty());
}

TEST_F(WorkerRegistrationTest, AHeartbeatAnsweredNotFoundOrFailedPreconditionRegistersAgain) {
  ASSERT_THAT(registration_.Register(), IsOk());
  registration_.OnHeartbeatFailed(absl::NotFoundError("worker 7 is not registered"));
  EXPECT_EQ(registration_.worker_id(), 8u);
  registration_.OnHeartbeatFailed(absl::FailedPreconditionError("stale incarnation"));
  EXPECT_EQ(registration_.worker_id(), 9u);
  EXPECT_THAT(ids_, ElementsAre(7u, 8u, 9u));
  EXPECT_THAT(seen_, ElementsAre(true, false, true, false, true));
}

TEST_F(WorkerRegistrationTest, OnlyRefusalsInARowRegisterAgain) {
  ASSERT_THAT(registration_.Register(), IsOk());
  const absl::Status too_large = absl::ResourceExhaustedError("larger than max");
  for (int i = 1; i < WorkerRegistration::kExhaustedBeforeRegister; ++i) {
    registration_.OnHeartbeatFailed(too_large);
  }
  registration_.OnHeartbeatAnswered();  // the count starts again
  for (int i = 1; i < WorkerRegistration::kExhaustedBeforeRegister; ++i) {
    registration_.OnHeartbeatFailed(too_large);
  }
  registration_.OnHeartbeatFailed(absl::UnavailableError("coordinator down"));  // not a refusal
  EXPECT_EQ(coordinator_.registrations(), 1);
  registration_.OnHeartbeatFailed(too_large);
  EXPECT_EQ(coordinator_.registrations(), 2);
  EXPECT_THAT(seen_, ElementsAre(true, false, true));
}

TEST_F(WorkerRegistrationTest, AFailedRegistrationAgainLeavesTheWorkerUnregistered) {
  ASSERT_THAT(registration_.Register(), IsOk());
  coordinator_.FailRegistrations(absl::UnavailableError("coordinator restarting"));
  registration_.OnHeartbeatFailed(absl::NotFoundError("worker 7 is not registered"));
  EXPECT_FALSE(registration_.registered());
  EXPECT_THAT(seen_, ElementsAre(true, false));
  coordinator_.FailRegistrations(absl::OkStatus());
  ASSERT_THAT(registration_.Register(), IsOk());  // the heartbeat loop's next try
  EXPECT_TRUE(registration_.registered());
  EXPECT_THAT(seen_, ElementsAre(true, false, true));
}

}  // namespace
}  // namespace stoker
