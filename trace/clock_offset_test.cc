#include "trace/clock_offset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/status_matchers_for_test.h"

namespace stoker::trace {
namespace {

using ::testing::HasSubstr;

// A round trip between a local clock and a peer clock `skew_ns` ahead of it: the request takes
// `forward_ns`, the peer holds it `hold_ns`, the response takes `back_ns`.
ClockSample Exchange(int64_t t0, int64_t skew_ns, int64_t forward_ns, int64_t hold_ns,
                     int64_t back_ns) {
  ClockSample sample;
  sample.t0 = t0;
  sample.t1 = t0 + forward_ns + skew_ns;
  sample.t2 = sample.t1 + hold_ns;
  sample.t3 = sample.t2 - skew_ns + back_ns;
  return sample;
}

TEST(OffsetOfSampleTest, SymmetricRoundTripGivesTheExactOffset) {
  const auto offset = OffsetOfSample(Exchange(1000, 5000, 200, 50, 200));
  ASSERT_TRUE(offset.ok()) << offset.status();
  EXPECT_EQ(offset->offset_ns, 5000);
  EXPECT_EQ(offset->delay_ns, 400);
  EXPECT_EQ(offset->error_bound_ns, 200);
}

TEST(OffsetOfSampleTest, AsymmetricRoundTripStaysWithinTheBound) {
  // Slow request, fast response: the estimate is off by (300 - 100) / 2, inside delay / 2.
  const auto offset = OffsetOfSample(Exchange(1000, 5000, 300, 50, 100));
  ASSERT_TRUE(offset.ok()) << offset.status();
  EXPECT_EQ(offset->offset_ns, 5100);
  EXPECT_EQ(offset->delay_ns, 400);
  EXPECT_EQ(offset->error_bound_ns, 200);
  // All of the delay one way: the worst case sits exactly on the bound.
  const auto worst = OffsetOfSample(Exchange(1000, 5000, 400, 50, 0));
  ASSERT_TRUE(worst.ok()) << worst.status();
  EXPECT_EQ(worst->offset_ns - 5000, worst->error_bound_ns);
}

TEST(OffsetOfSampleTest, PeerBehindWithAnOddSumRoundsDownAndTheBoundUp) {
  // Peer 7 ns behind; 2 ns out, 1 ns back: the midpoint is -6.5.
  const auto offset = OffsetOfSample(Exchange(10, -7, 2, 0, 1));
  ASSERT_TRUE(offset.ok()) << offset.status();
  EXPECT_EQ(offset->offset_ns, -7);
  EXPECT_EQ(offset->delay_ns, 3);
  EXPECT_EQ(offset->error_bound_ns, 2);
  EXPECT_EQ(PeerToLocal(100, *offset), 107);
}

TEST(OffsetOfSampleTest, ImpossibleSamplesAreRefused) {
  EXPECT_THAT(OffsetOfSample(ClockSample{10, 0, 0, 5}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sample: local receive")));
  EXPECT_THAT(OffsetOfSample(ClockSample{0, 10, 5, 20}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sample: peer send")));
  EXPECT_THAT(OffsetOfSample(ClockSample{0, 0, 20, 10}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("longer than the 10 ns")));
}

TEST(ClockOffsetEstimatorTest, UsesTheSmallestDelayOfTheWindow) {
  ClockOffsetEstimator estimator(/*window=*/3);
  EXPECT_EQ(estimator.Estimate(), std::nullopt);
  ASSERT_TRUE(estimator.Add(Exchange(0, 9000, 300, 10, 100)).ok());     // delay 400, offset 9100
  ASSERT_TRUE(estimator.Add(Exchange(1000, 9000, 60, 10, 40)).ok());    // delay 100, offset 9010
  ASSERT_TRUE(estimator.Add(Exchange(2000, 9000, 100, 10, 200)).ok());  // delay 300, offset 8950
  ASSERT_TRUE(estimator.Estimate().has_value());
  EXPECT_EQ(estimator.Estimate()->offset_ns, 9010);
  EXPECT_EQ(estimator.Estimate()->error_bound_ns, 50);
  // A bad sample changes nothing.
  EXPECT_THAT(estimator.Add(ClockSample{10, 0, 0, 5}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sample:")));
  EXPECT_EQ(estimator.Estimate()->offset_ns, 9010);
  // Two more samples push the best one out of the window of 3.
  ASSERT_TRUE(estimator.Add(Exchange(3000, 9000, 150, 10, 150)).ok());  // delay 300, offset 9000
  ASSERT_TRUE(estimator.Add(Exchange(4000, 9000, 250, 10, 250)).ok());  // delay 500, offset 9000
  EXPECT_EQ(estimator.Estimate()->offset_ns, 8950);
  EXPECT_EQ(estimator.Estimate()->delay_ns, 300);
}

TEST(ClockOffsetTest, TwoHopsMoveAWorkerInstantIntoTheCoordinatorsClock) {
  // The worker's clock is 1000 ns ahead of the client's (the stream's estimate, client local);
  // the coordinator's is 500 ns ahead of the client's (the heartbeat's estimate).
  const ClockOffset worker_vs_client{1000, 30, 60};
  const ClockOffset coordinator_vs_client{500, 5, 10};
  const int64_t worker_instant = 10'000;
  const int64_t client_instant = PeerToLocal(worker_instant, worker_vs_client);
  EXPECT_EQ(client_instant, 9'000);
  EXPECT_EQ(LocalToPeer(client_instant, coordinator_vs_client), 9'500);
}

}  // namespace
}  // namespace stoker::trace
