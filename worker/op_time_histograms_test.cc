#include "worker/op_time_histograms.h"

#include "gtest/gtest.h"

namespace stoker {
namespace {

TEST(OpTimeHistogramsTest, BucketsByUpperBoundAndMerges) {
  OpTimeHistograms thread;
  thread.Observe(1, "gaussian_blur", 2e-4);  // ≤ 3e-4: bucket 3.
  thread.Observe(1, "gaussian_blur", 3e-4);  // An upper bound is inclusive.
  thread.Observe(0, "decode", 5.0);          // Past every bound: +Inf.
  OpTimeHistograms worker;
  worker.Observe(1, "gaussian_blur", 1e-6);  // Bucket 0.
  worker.MergeFrom(thread);
  EXPECT_TRUE(thread.series().empty());

  ASSERT_EQ(worker.series().size(), 2u);
  const OpTimeHistograms::Series& blur = worker.series()[0];
  EXPECT_EQ(blur.op, "gaussian_blur");
  EXPECT_EQ(blur.position, 1u);
  EXPECT_EQ(blur.seconds.count(), 3u);
  EXPECT_DOUBLE_EQ(blur.seconds.sum(), 5e-4 + 1e-6);
  EXPECT_EQ(blur.seconds.counts()[0], 1u);
  EXPECT_EQ(blur.seconds.counts()[3], 2u);
  const OpTimeHistograms::Series& decode = worker.series()[1];
  EXPECT_EQ(decode.seconds.counts()[OpTimeHistograms::Bounds().size()], 1u);
}

TEST(OpTimeHistogramsTest, SameNameAtAnotherPositionIsAnotherSeries) {
  OpTimeHistograms h;
  h.Observe(1, "gaussian_blur", 1e-3);
  h.Observe(2, "gaussian_blur", 1e-3);
  EXPECT_EQ(h.series().size(), 2u);
}

}  // namespace
}  // namespace stoker
