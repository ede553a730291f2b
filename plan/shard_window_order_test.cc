#include "plan/shard_window_order.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "common/counter_rng.h"
#include "coordinator/status_matchers_for_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plan/epoch_plan.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

// Shard boundaries for shards of the given sizes.
std::vector<uint64_t> Starts(const std::vector<uint64_t>& sizes) {
  std::vector<uint64_t> starts = {0};
  for (uint64_t size : sizes) starts.push_back(starts.back() + size);
  return starts;
}

// The shard holding sample `index`.
size_t ShardOf(const std::vector<uint64_t>& starts, uint64_t index) {
  return std::upper_bound(starts.begin(), starts.end(), index) - starts.begin() - 1;
}

TEST(ShardWindowOrderTest, IsABijectionThatReadsEachShardInOneWindow) {
  const std::vector<std::vector<uint64_t>> datasets = {
      {5}, {1, 1, 1}, {7, 0, 3, 12, 0, 1, 9}, {100, 1, 50, 50, 3, 64, 64, 2, 17, 40, 33}};
  for (const auto& sizes : datasets) {
    const std::vector<uint64_t> starts = Starts(sizes);
    const uint64_t n = starts.back();
    for (uint32_t window : {1u, 2u, 3u, 4u, static_cast<uint32_t>(sizes.size() + 3)}) {
      for (uint64_t key = 0; key < 5; ++key) {
        auto order_or = ShardWindowOrder::Create(starts, window, key, key);
        ASSERT_TRUE(order_or.ok()) << order_or.status();
        const ShardWindowOrder& order = *order_or;
        ASSERT_EQ(order.size(), n);
        std::vector<bool> seen(n, false);
        std::vector<int64_t> window_of_shard(sizes.size(), -1);
        uint64_t last_window = 0;
        for (uint64_t p = 0; p < n; ++p) {
          const uint64_t sample = order.At(p);
          ASSERT_LT(sample, n);
          EXPECT_FALSE(seen[sample]) << "sample " << sample << " twice";
          seen[sample] = true;
          // Windows are contiguous stretches in increasing order; a shard belongs to one.
          const uint64_t w = order.WindowOf(p);
          EXPECT_GE(w, last_window);
          last_window = w;
          int64_t& shard_window = window_of_shard[ShardOf(starts, sample)];
          if (shard_window < 0) shard_window = static_cast<int64_t>(w);
          EXPECT_EQ(shard_window, static_cast<int64_t>(w)) << "a shard read in two windows";
        }
        // A window holds at most `window` shards.
        for (uint64_t w = 0; w <= last_window; ++w) {
          EXPECT_LE(
              std::count(window_of_shard.begin(), window_of_shard.end(), static_cast<int64_t>(w)),
              static_cast<int64_t>(window));
        }
      }
    }
  }
}

TEST(ShardWindowOrderTest, ShardsMoveBetweenEpochs) {
  const std::vector<uint64_t> starts = Starts(std::vector<uint64_t>(64, 10));
  std::set<std::vector<uint64_t>> first_windows;
  for (uint64_t key = 0; key < 8; ++key) {
    auto order_or = ShardWindowOrder::Create(starts, 4, key, key);
    ASSERT_TRUE(order_or.ok()) << order_or.status();
    const ShardWindowOrder& order = *order_or;
    std::set<uint64_t> shards;
    for (uint64_t p = 0; p < 40; ++p) shards.insert(ShardOf(starts, order.At(p)));
    EXPECT_EQ(shards.size(), 4u);
    first_windows.insert(std::vector<uint64_t>(shards.begin(), shards.end()));
  }
  EXPECT_GT(first_windows.size(), 6u);
}

TEST(ShardWindowOrderTest, RejectsBadWindowsAndUnshardedDatasets) {
  const std::vector<uint64_t> starts = Starts({3, 4});
  EXPECT_THAT(ShardWindowOrder::Create(starts, 0, 1, 1).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.shuffle_window_shards: must be in [1, 65536]")));
  EXPECT_THAT(ShardWindowOrder::Create(starts, 65537, 1, 1).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.shuffle_window_shards: must be in [1, 65536]")));
  EXPECT_THAT(ShardWindowOrder::Create(absl::Span<const uint64_t>(), 2, 1, 1).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.shuffle: SHUFFLE_MODE_SHARD_WINDOW needs a sharded")));
  EXPECT_THAT(ShardWindowOrder::Create(std::vector<uint64_t>{0, 5, 3}, 2, 1, 1).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.shuffle: shard")));
}

TEST(ShardWindowOrderTest, EpochPlanUsesTheShardBoundaries) {
  stoker::v1::JobSpec spec;
  spec.set_batch_size(4);
  spec.set_world_size(1);
  spec.set_seed(3);
  spec.set_shuffle(stoker::v1::SHUFFLE_MODE_SHARD_WINDOW);
  spec.set_shuffle_window_shards(2);
  const std::vector<uint64_t> starts = Starts({4, 4, 4, 4});
  EXPECT_THAT(EpochPlan::Create(spec, 16, 0).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("needs a sharded dataset")));
  EXPECT_THAT(EpochPlan::Create(spec, 17, 0, starts).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.shuffle: the shards hold 16 samples, not 17")));
  auto plan_or = EpochPlan::Create(spec, 16, 1, starts);
  ASSERT_TRUE(plan_or.ok()) << plan_or.status();
  const EpochPlan& plan = *plan_or;
  auto order_or = ShardWindowOrder::Create(starts, 2, KeyOf(3 ^ kPlanDomain, 1, 0),
                                           KeyOf(3 ^ kPlanDomain, 1, 0));
  ASSERT_TRUE(order_or.ok()) << order_or.status();
  const ShardWindowOrder& order = *order_or;
  for (uint64_t p = 0; p < 16; ++p) EXPECT_EQ(plan.SampleAt(p), order.At(p));
  // The first two batches read two shards, the last two the other two.
  std::set<size_t> first_half;
  for (uint64_t p = 0; p < 8; ++p) first_half.insert(ShardOf(starts, plan.SampleAt(p)));
  EXPECT_EQ(first_half.size(), 2u);
}

// JobSpec.sweep_seed: jobs with their own seeds read the same shards in every window (the
// sweep's order of shards), each in its own order inside the window.
TEST(ShardWindowOrderTest, JobsSharingASweepSeedReadTheSameWindowsInTheirOwnOrder) {
  const std::vector<uint64_t> starts = Starts({5, 7, 6, 5, 8, 4, 6, 7});
  auto windows_of = [&](uint64_t seed, uint64_t sweep_seed) {
    stoker::v1::JobSpec spec;
    spec.set_batch_size(4);
    spec.set_world_size(1);
    spec.set_seed(seed);
    spec.set_sweep_seed(sweep_seed);
    spec.set_shuffle(stoker::v1::SHUFFLE_MODE_SHARD_WINDOW);
    spec.set_shuffle_window_shards(2);
    auto plan = EpochPlan::Create(spec, 48, 2, starts);
    EXPECT_TRUE(plan.ok()) << plan.status();
    std::vector<uint64_t> order(48);
    for (uint64_t p = 0; p < 48; ++p) order[p] = plan->SampleAt(p);
    return order;
  };
  // The shards of each quarter of the positions (every window holds two shards here).
  auto shards_by_window = [&](const std::vector<uint64_t>& order) {
    std::vector<std::set<size_t>> windows;
    for (uint64_t p = 0; p < order.size(); ++p) {
      const size_t shard = ShardOf(starts, order[p]);
      if (windows.empty() || (windows.back().size() == 2 && windows.back().count(shard) == 0)) {
        windows.emplace_back();
      }
      windows.back().insert(shard);
    }
    return windows;
  };
  const auto first = windows_of(1, 99);
  for (uint64_t seed : {2, 3, 4}) {
    const auto other = windows_of(seed, 99);
    EXPECT_EQ(shards_by_window(other), shards_by_window(first)) << seed;
    EXPECT_NE(other, first) << seed;  // each job its own order inside the windows
  }
  // Without the sweep seed the jobs' windows differ; a sweep seed equal to the seed is no change.
  EXPECT_NE(shards_by_window(windows_of(2, 0)), shards_by_window(windows_of(1, 0)));
  EXPECT_EQ(windows_of(5, 5), windows_of(5, 0));
}

}  // namespace
}  // namespace stoker
