#include "worker/decoded_cache_probe.h"

#include "gtest/gtest.h"

namespace stoker {
namespace {

using Route = DecodedCacheProbe::Route;

DecodedCacheProbe::CachedSample ProbeMiss(double seconds) {
  DecodedCacheProbe::CachedSample sample;
  sample.seconds = seconds;
  sample.prefix_seconds = seconds - 0.2e-3;
  sample.entry_bytes = 196'608;
  sample.entries_fit = 1000;
  return sample;
}

// Feeds `probe` its turns: uncached samples cost `uncached`, cached ones miss at `miss`, until
// it decides; returns the choice.
DecodedCacheChoice ProbeUntilChosen(DecodedCacheProbe& probe, double uncached, double miss) {
  for (int turn = 0; turn < 100; ++turn) {
    const DecodedCacheProbe::Turn next = probe.Next();
    EXPECT_TRUE(next.timed) << "turn " << turn;
    const std::optional<DecodedCacheChoice> choice = next.route == Route::kUncached
                                                         ? probe.RecordUncached(uncached)
                                                         : probe.RecordCached(ProbeMiss(miss));
    if (choice.has_value()) {
      EXPECT_EQ(turn + 1, 2 * static_cast<int>(DecodedCacheProbe::kSamplesPerRoute));
      return *choice;
    }
  }
  ADD_FAILURE() << "no choice after 100 turns";
  return {};
}

TEST(DecodedCacheProbeTest, TurnsAlternateUntilEachRouteIsTimedThenFollowTheChoice) {
  DecodedCacheProbe probe(1000, 3);
  EXPECT_EQ(probe.Next().route, Route::kUncached);
  EXPECT_EQ(probe.Next().route, Route::kCached);
  EXPECT_FALSE(probe.choice().has_value());
}

TEST(DecodedCacheProbeTest, ACheapHitOverThreeEpochsChoosesTheCache) {
  DecodedCacheProbe probe(1000, 3);
  // A miss 1.3 ms with a 1.1 ms prefix: a hit is estimated at 0.2 ms against 1 ms uncached.
  const DecodedCacheChoice choice = ProbeUntilChosen(probe, 1.0e-3, 1.3e-3);
  EXPECT_TRUE(choice.use) << choice.why;
  EXPECT_NEAR(choice.with_cache_seconds, (1.3e-3 + 2 * 0.2e-3) / 3, 1e-12);
  for (int i = 0; i < 4; ++i) {
    const DecodedCacheProbe::Turn turn = probe.Next();
    EXPECT_EQ(turn.route, Route::kCached);
    EXPECT_FALSE(turn.timed);
  }
  ASSERT_TRUE(probe.choice().has_value());
  EXPECT_TRUE(probe.choice()->use);
}

TEST(DecodedCacheProbeTest, OneEpochLeavesTheCacheOff) {
  DecodedCacheProbe probe(1000, 1);
  const DecodedCacheChoice choice = ProbeUntilChosen(probe, 1.0e-3, 1.3e-3);
  EXPECT_FALSE(choice.use) << choice.why;
  EXPECT_EQ(probe.Next().route, Route::kUncached);
  EXPECT_FALSE(probe.Next().timed);
}

TEST(DecodedCacheProbeTest, JobsSharingTheEntriesCountAsPasses) {
  // One epoch each, but four jobs of a sweep read the same entries: each decode serves 4 passes.
  DecodedCacheProbe probe(1000, 1);
  std::optional<DecodedCacheChoice> choice;
  for (uint32_t i = 0; i < DecodedCacheProbe::kSamplesPerRoute; ++i) {
    DecodedCacheProbe::CachedSample miss = ProbeMiss(1.3e-3);
    miss.group_members = 4;
    EXPECT_FALSE(probe.RecordCached(miss).has_value());
    choice = probe.RecordUncached(1.0e-3);
  }
  ASSERT_TRUE(choice.has_value());
  EXPECT_TRUE(choice->use) << choice->why;
  EXPECT_NEAR(choice->with_cache_seconds, (1.3e-3 + 3 * 0.2e-3) / 4, 1e-12);
}

TEST(DecodedCacheProbeTest, SweepAlignedJobsHitOnADatasetLargerThanTheCache) {
  // Four one-epoch jobs over 10,000 samples, the cache holding 1,000 entries: unaligned, later
  // passes hit 10 % and the cache is left off; sharing a sweep seed with blocks of 256, it is used.
  for (const uint32_t aligned : {0u, 4u}) {
    DecodedCacheProbe probe(10'000, 1);
    std::optional<DecodedCacheChoice> choice;
    for (uint32_t i = 0; i < DecodedCacheProbe::kSamplesPerRoute; ++i) {
      DecodedCacheProbe::CachedSample miss = ProbeMiss(1.3e-3);
      miss.group_members = 4;
      miss.aligned_members = aligned;
      miss.aligned_window_samples = aligned > 0 ? 256 : 0;
      EXPECT_FALSE(probe.RecordCached(miss).has_value());
      choice = probe.RecordUncached(1.0e-3);
    }
    ASSERT_TRUE(choice.has_value());
    EXPECT_EQ(choice->use, aligned > 0) << choice->why;
    EXPECT_DOUBLE_EQ(choice->aligned_hit_share, aligned > 0 ? 1.0 : 0.0);
  }
}

TEST(DecodedCacheProbeTest, AChoiceMadeAloneIsMadeAgainWhenTheSweepsOtherJobsJoin) {
  // The first job of an aligned sweep decides before the others open: alone, one epoch, a
  // dataset ten times the cache: off.
  DecodedCacheProbe probe(10'000, 1);
  std::optional<DecodedCacheChoice> choice;
  for (uint32_t i = 0; i < DecodedCacheProbe::kSamplesPerRoute; ++i) {
    DecodedCacheProbe::CachedSample miss = ProbeMiss(1.3e-3);
    miss.aligned_members = 1;
    miss.aligned_window_samples = 256;
    EXPECT_FALSE(probe.RecordCached(miss).has_value());
    choice = probe.RecordUncached(1.0e-3);
  }
  ASSERT_TRUE(choice.has_value());
  EXPECT_FALSE(choice->use) << choice->why;
  // Every kReconsiderEvery-th turn asks for the members now.
  for (uint64_t turn = 1; turn < DecodedCacheProbe::kReconsiderEvery; ++turn) {
    const DecodedCacheProbe::Turn next = probe.Next();
    EXPECT_FALSE(next.reconsider || next.timed) << turn;
    EXPECT_EQ(next.route, Route::kUncached);
  }
  EXPECT_TRUE(probe.Next().reconsider);
  EXPECT_FALSE(probe.Reconsider(1, 1).has_value());  // nobody joined: nothing to do
  const std::optional<DecodedCacheChoice> joined = probe.Reconsider(4, 4);
  ASSERT_TRUE(joined.has_value());
  EXPECT_TRUE(joined->use) << joined->why;
  EXPECT_EQ(probe.Next().route, Route::kCached);
  EXPECT_TRUE(probe.choice()->use);
  // The same measured costs, so no second change for the same members.
  EXPECT_FALSE(probe.Reconsider(4, 4).has_value());
}

TEST(DecodedCacheProbeTest, SamplesThatMappedCacheMemoryAreLeftOutAtMostKSamplesPerRoute) {
  DecodedCacheProbe probe(1000, 3);
  for (uint32_t i = 0; i < DecodedCacheProbe::kSamplesPerRoute; ++i) {
    EXPECT_TRUE(probe.SkipColdSample()) << i;
  }
  EXPECT_FALSE(probe.SkipColdSample());
}

TEST(DecodedCacheProbeTest, EveryEntryThereDecidesFromTheCostTheEntriesRecorded) {
  // A second worker's probe on a warm cache: every cached turn hits. A miss is then the hit plus
  // the prefix time recorded with the entry: 0.2 + 1.1 ms.
  DecodedCacheProbe probe(1000, 2);
  std::optional<DecodedCacheChoice> choice;
  for (uint32_t i = 0; i < DecodedCacheProbe::kSamplesPerRoute; ++i) {
    DecodedCacheProbe::CachedSample hit = ProbeMiss(0.2e-3);
    hit.hit = true;
    hit.prefix_seconds = 1.1e-3;
    EXPECT_FALSE(probe.RecordCached(hit).has_value());
    choice = probe.RecordUncached(1.0e-3);
  }
  ASSERT_TRUE(choice.has_value());
  EXPECT_TRUE(choice->use) << choice->why;
  EXPECT_NEAR(choice->with_cache_seconds, (1.3e-3 + 0.2e-3) / 2, 1e-12);
}

TEST(DecodedCacheProbeTest, MeasuredHitsReplaceTheEstimate) {
  DecodedCacheProbe probe(1000, 2);
  // Another job's entries: every cached turn hits at 0.9 ms, but one miss is needed for the
  // entry's size and prefix cost.
  std::optional<DecodedCacheChoice> choice = probe.RecordCached(ProbeMiss(1.3e-3));
  for (uint32_t i = 0; i < DecodedCacheProbe::kSamplesPerRoute; ++i) {
    DecodedCacheProbe::CachedSample hit = ProbeMiss(0.9e-3);
    hit.hit = true;
    hit.prefix_seconds = 1.1e-3;  // what the entry recorded
    EXPECT_FALSE(probe.RecordCached(hit).has_value());
  }
  for (uint32_t i = 0; i + 1 < DecodedCacheProbe::kSamplesPerRoute; ++i) {
    EXPECT_FALSE(probe.RecordUncached(1.0e-3).has_value());
  }
  choice = probe.RecordUncached(1.0e-3);
  ASSERT_TRUE(choice.has_value());
  // (1.3 + 0.9) / 2 = 1.1 ms against 1.0: off; with the estimate (0.2 ms) it would be on.
  EXPECT_FALSE(choice->use) << choice->why;
  EXPECT_NEAR(choice->with_cache_seconds, (1.3e-3 + 0.9e-3) / 2, 1e-12);
}

}  // namespace
}  // namespace stoker
