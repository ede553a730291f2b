// The Loader's heartbeats carry the utilization its LoaderEnv::gpu_utilization samples
// (ClientStats.gpu_utilization), and nothing without one.

#include <memory>
#include <optional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer_client/loader_env.h"
#include "trainer_client/testing/loader_test_fixture.h"

namespace stoker::testing {
namespace {

// Answers `value` to every sample.
class FixedGpuUtilization : public GpuUtilizationSampler {
 public:
  explicit FixedGpuUtilization(std::optional<double> value) : value_(value) {}
  std::optional<double> Sample() override { return value_; }

 private:
  const std::optional<double> value_;
};

TEST_F(LoaderTest, HeartbeatsCarryTheSampledGpuUtilization) {
  gpu_utilization_ = std::make_shared<FixedGpuUtilization>(0.42);
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  ASSERT_TRUE(Heartbeats(2));
  EXPECT_THAT(coordinator_->last_stats().gpu_utilization(), ::testing::DoubleEq(0.42));
}

TEST_F(LoaderTest, AnUnknownSampleLeavesTheUtilizationUnset) {
  gpu_utilization_ = std::make_shared<FixedGpuUtilization>(std::nullopt);
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  ASSERT_TRUE(Heartbeats(2));
  EXPECT_FALSE(coordinator_->last_stats().has_gpu_utilization());
}

TEST_F(LoaderTest, WithoutASamplerTheUtilizationIsUnset) {
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  ASSERT_TRUE(Heartbeats(2));
  EXPECT_FALSE(coordinator_->last_stats().has_gpu_utilization());
}

}  // namespace
}  // namespace stoker::testing
