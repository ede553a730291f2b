#include "plan/epoch_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using stoker::v1::JobSpec;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

JobSpec Spec(uint32_t batch, uint32_t world, bool drop_last,
             stoker::v1::ShuffleMode mode = stoker::v1::SHUFFLE_MODE_GLOBAL, uint32_t block = 0) {
  JobSpec spec;
  spec.set_batch_size(batch);
  spec.set_world_size(world);
  spec.set_drop_last(drop_last);
  spec.set_seed(1234);
  spec.set_shuffle(mode);
  spec.set_shuffle_block(block);
  return spec;
}

bool IsPermutation(std::vector<uint64_t> order) {
  std::sort(order.begin(), order.end());
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] != i) return false;
  }
  return true;
}

TEST(PermuteSamplesTest, NoneIsIdentity) {
  EXPECT_THAT(PermuteSamples(5, 1, 0, stoker::v1::SHUFFLE_MODE_NONE, 0),
              ElementsAre(0, 1, 2, 3, 4));
}

TEST(PermuteSamplesTest, GlobalIsDeterministicPermutationNewEachEpoch) {
  const auto a = PermuteSamples(1000, 7, 0, stoker::v1::SHUFFLE_MODE_GLOBAL, 0);
  EXPECT_TRUE(IsPermutation(a));
  EXPECT_EQ(a, PermuteSamples(1000, 7, 0, stoker::v1::SHUFFLE_MODE_GLOBAL, 0));
  EXPECT_NE(a, PermuteSamples(1000, 7, 1, stoker::v1::SHUFFLE_MODE_GLOBAL, 0));
  EXPECT_NE(a, PermuteSamples(1000, 8, 0, stoker::v1::SHUFFLE_MODE_GLOBAL, 0));
}

// Plans must never change across versions or machines: these values are the contract.
TEST(PermuteSamplesTest, GlobalOrderIsPinned) {
  EXPECT_THAT(PermuteSamples(10, 42, 3, stoker::v1::SHUFFLE_MODE_GLOBAL, 0),
              ElementsAre(6, 5, 8, 9, 1, 4, 0, 3, 2, 7));
}

TEST(PermuteSamplesTest, BlockKeepsBlocksTogether) {
  const uint32_t block = 4;
  const auto order = PermuteSamples(22, 3, 0, stoker::v1::SHUFFLE_MODE_BLOCK, block);
  ASSERT_TRUE(IsPermutation(order));
  EXPECT_NE(order, PermuteSamples(22, 3, 0, stoker::v1::SHUFFLE_MODE_NONE, 0));
  // Walking the order, each block's members appear as one contiguous run.
  std::set<uint64_t> finished;
  uint64_t current = order[0] / block;
  for (uint64_t index : order) {
    if (index / block != current) {
      finished.insert(current);
      current = index / block;
      EXPECT_EQ(finished.count(current), 0u) << "block " << current << " split";
    }
  }
}

TEST(BatchesPerRankTest, DropLastAndPadding) {
  EXPECT_EQ(BatchesPerRank(100, 10, 2, true), 5u);
  EXPECT_EQ(BatchesPerRank(105, 10, 2, true), 5u);   // 10 full batches.
  EXPECT_EQ(BatchesPerRank(125, 10, 2, true), 6u);   // 12 full batches.
  EXPECT_EQ(BatchesPerRank(115, 10, 2, true), 5u);   // 11 full: the odd one is dropped.
  EXPECT_EQ(BatchesPerRank(105, 10, 2, false), 6u);  // 11 batches padded to 12.
  EXPECT_EQ(BatchesPerRank(5, 10, 4, false), 1u);    // Fewer samples than one batch.
  EXPECT_EQ(BatchesPerRank(5, 10, 4, true), 0u);
}

TEST(EpochPlanTest, DropLastPartitionCoversEachUsedSampleOnce) {
  auto plan = EpochPlan::Create(Spec(8, 3, true), 100, 0);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->batches_per_rank(), 4u);  // floor(floor(100/8)=12 / 3)
  std::map<uint64_t, int> seen;
  std::vector<uint64_t> samples(8);
  for (uint32_t rank = 0; rank < 3; ++rank) {
    for (uint64_t k = 0; k < plan->batches_per_rank(); ++k) {
      ASSERT_TRUE(plan->BatchSamples(GlobalBatchIndex(rank, k, 3), absl::MakeSpan(samples)).ok());
      for (uint64_t s : samples) ++seen[s];
    }
  }
  EXPECT_EQ(seen.size(), 96u);
  for (const auto& [index, count] : seen) EXPECT_EQ(count, 1) << index;
}

TEST(EpochPlanTest, PaddingWrapsAroundSoEverySampleIsSeen) {
  auto plan = EpochPlan::Create(Spec(4, 2, false, stoker::v1::SHUFFLE_MODE_NONE), 10, 0);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->batches_per_rank(), 2u);  // ceil(10/4)=3 batches → 4 for equal ranks.
  std::vector<uint64_t> samples(4);
  ASSERT_TRUE(plan->BatchSamples(2, absl::MakeSpan(samples)).ok());
  EXPECT_THAT(samples, ElementsAre(8, 9, 0, 1));
  ASSERT_TRUE(plan->BatchSamples(3, absl::MakeSpan(samples)).ok());
  EXPECT_THAT(samples, ElementsAre(2, 3, 4, 5));
}

TEST(EpochPlanTest, RankOfBatchInvertsGlobalBatchIndex) {
  for (uint32_t rank = 0; rank < 5; ++rank) {
    for (uint64_t k = 0; k < 7; ++k) EXPECT_EQ(RankOfBatch(GlobalBatchIndex(rank, k, 5), 5), rank);
  }
}

TEST(EpochPlanTest, RejectsBadInput) {
  EXPECT_EQ(EpochPlan::Create(Spec(0, 1, true), 10, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(EpochPlan::Create(Spec(1, 0, true), 10, 0).status().message()),
              HasSubstr("world_size"));
  EXPECT_THAT(
      std::string(EpochPlan::Create(Spec(1, 1, true, stoker::v1::SHUFFLE_MODE_BLOCK, 0), 10, 0)
                      .status()
                      .message()),
      HasSubstr("shuffle_block"));
  auto plan = EpochPlan::Create(Spec(2, 1, true), 10, 0);
  std::vector<uint64_t> samples(2), wrong(3);
  // 5 batches of 1 rank: the limit, counting a resumed epoch's pad batches, is 2 * 5 + 2.
  EXPECT_TRUE(plan->BatchSamples(5, absl::MakeSpan(samples)).ok());  // a pad batch: wraps
  EXPECT_EQ(plan->BatchSamples(12, absl::MakeSpan(samples)).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(plan->BatchSamples(0, absl::MakeSpan(wrong)).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stoker
