#include "plan/epoch_plan.h"

#include <algorithm>
#include <map>
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

std::vector<uint64_t> OrderOf(uint64_t n, uint64_t seed, uint32_t epoch,
                              stoker::v1::ShuffleMode mode, uint32_t block = 0) {
  const EpochOrder order(n, seed, epoch, mode, block);
  std::vector<uint64_t> out(n);
  for (uint64_t p = 0; p < n; ++p) out[p] = order.At(p);
  return out;
}

TEST(EpochOrderTest, NoneIsIdentity) {
  EXPECT_THAT(OrderOf(5, 1, 0, stoker::v1::SHUFFLE_MODE_NONE), ElementsAre(0, 1, 2, 3, 4));
}

TEST(EpochOrderTest, GlobalIsDeterministicNewEachEpochAndSeed) {
  const auto a = OrderOf(1000, 7, 0, stoker::v1::SHUFFLE_MODE_GLOBAL);
  EXPECT_EQ(a, OrderOf(1000, 7, 0, stoker::v1::SHUFFLE_MODE_GLOBAL));
  EXPECT_NE(a, OrderOf(1000, 7, 1, stoker::v1::SHUFFLE_MODE_GLOBAL));
  EXPECT_NE(a, OrderOf(1000, 8, 0, stoker::v1::SHUFFLE_MODE_GLOBAL));
}

// Plans must never change across versions or machines: these values are the contract.
TEST(EpochOrderTest, OrdersArePinned) {
  EXPECT_THAT(OrderOf(10, 42, 3, stoker::v1::SHUFFLE_MODE_GLOBAL),
              ElementsAre(4, 9, 1, 8, 0, 6, 3, 2, 7, 5));
  EXPECT_THAT(OrderOf(10, 42, 3, stoker::v1::SHUFFLE_MODE_BLOCK, 4),
              ElementsAre(3, 2, 1, 0, 6, 7, 4, 5, 9, 8));
  const EpochOrder huge(uint64_t{1} << 36, 42, 3, stoker::v1::SHUFFLE_MODE_GLOBAL, 0);
  EXPECT_EQ(huge.At(0), 52182745767u);
  EXPECT_EQ(huge.At((uint64_t{1} << 36) - 1), 20647721796u);
}

// JobSpec.sweep_seed with BLOCK: every job of the sweep holds the same block at every slot (the
// same samples at positions [t*W, (t+1)*W)), in its own order inside it; epochs still differ.
TEST(EpochOrderTest, ASweepSeedAlignsTheBlocksOfJobsWithTheirOwnOrderInside) {
  constexpr uint64_t kN = 1000, kBlock = 100;
  auto blocks_at_slots = [](const std::vector<uint64_t>& order) {
    std::vector<std::vector<uint64_t>> blocks;
    for (uint64_t begin = 0; begin < order.size(); begin += kBlock) {
      std::vector<uint64_t> block(order.begin() + begin, order.begin() + begin + kBlock);
      std::sort(block.begin(), block.end());
      blocks.push_back(block);
    }
    return blocks;
  };
  auto order = [](uint64_t seed, uint32_t epoch, uint64_t sweep_seed) {
    const EpochOrder o(kN, seed, epoch, stoker::v1::SHUFFLE_MODE_BLOCK, kBlock, sweep_seed);
    std::vector<uint64_t> out(kN);
    for (uint64_t p = 0; p < kN; ++p) out[p] = o.At(p);
    return out;
  };
  const auto first = order(1, 2, 77);
  for (uint64_t seed : {2, 3, 4}) {
    EXPECT_EQ(blocks_at_slots(order(seed, 2, 77)), blocks_at_slots(first)) << seed;
    EXPECT_NE(order(seed, 2, 77), first) << seed;
  }
  EXPECT_NE(blocks_at_slots(order(1, 3, 77)), blocks_at_slots(first));  // a new epoch's blocks
  EXPECT_NE(blocks_at_slots(order(2, 2, 0)), blocks_at_slots(order(1, 2, 0)));
  EXPECT_EQ(order(42, 3, 42), order(42, 3, 0));  // the seed itself as sweep seed: no change
  // GLOBAL has no blocks: the sweep seed does not touch it (OpenJob refuses the pair).
  EXPECT_EQ(EpochOrder(kN, 1, 2, stoker::v1::SHUFFLE_MODE_GLOBAL, 0, 77).At(5),
            EpochOrder(kN, 1, 2, stoker::v1::SHUFFLE_MODE_GLOBAL, 0).At(5));
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
  // Positions of the last permitted batch, g * batch_size, must fit 64 bits.
  const absl::Status overflow =
      EpochPlan::Create(Spec(4000000000u, 4000000000u, false), uint64_t{1} << 40, 0).status();
  EXPECT_EQ(overflow.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(overflow.message()), HasSubstr("spec.batch_size: "));
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
