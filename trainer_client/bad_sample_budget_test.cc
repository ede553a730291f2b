#include "trainer_client/bad_sample_budget.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

stoker::v1::BatchHeader Header(uint32_t epoch, uint32_t corrupt, uint32_t unreadable = 0) {
  stoker::v1::BatchHeader header;
  header.mutable_task()->set_epoch(epoch);
  if (corrupt > 0) (*header.mutable_bad_samples())["corrupt_record"] = corrupt;
  if (unreadable > 0) (*header.mutable_bad_samples())["read_error"] = unreadable;
  return header;
}

TEST(BadSampleBudgetTest, FailsOnceAnEpochIsOverTheLimit) {
  BadSampleBudget budget(0.01, 640, 1);  // 6.4 samples allowed per epoch.
  EXPECT_TRUE(budget.Add(Header(0, 3)).ok());
  EXPECT_TRUE(budget.Add(Header(0, 0)).ok());
  EXPECT_TRUE(budget.Add(Header(1, 6)).ok());     // Epochs count separately.
  EXPECT_TRUE(budget.Add(Header(0, 2, 1)).ok());  // 6 in epoch 0.
  absl::Status status = budget.Add(Header(0, 1));
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("7 of 640 samples of epoch 0 for rank 1 unreadable (limit 1%): "
                        "corrupt_record=6, read_error=1"));
  EXPECT_EQ(budget.Add(Header(1, 0)).code(), absl::StatusCode::kDataLoss);
}

TEST(BadSampleBudgetTest, ZeroFractionFailsOnTheFirstBadSample) {
  BadSampleBudget budget(0, 100, 0);
  EXPECT_TRUE(budget.Add(Header(0, 0)).ok());
  EXPECT_EQ(budget.Add(Header(0, 1)).code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace stoker
