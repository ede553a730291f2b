// LeaseIndex (lease_index.h) on its own: expired leases in expiry order, the leases each worker
// holds, and what a release or a removal takes out of each index.

#include "coordinator/lease_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>

namespace stoker {
namespace {

using Key = LeaseIndex::Key;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

TEST(LeaseIndexTest, FindsTheFirstExpiredLeaseAndTheEarliestExpiry) {
  LeaseIndex index;
  EXPECT_EQ(index.EarliestExpiry(), std::nullopt);
  index.Add(Key{1, 0, 5}, /*expires_unix_ms=*/200, /*holder=*/7);
  index.Add(Key{1, 1, 3}, 100, 8);
  EXPECT_THAT(index.EarliestExpiry(), Optional(100));
  EXPECT_EQ(index.FirstExpiredBy(99), std::nullopt);
  EXPECT_THAT(index.FirstExpiredBy(100), Optional(Key{1, 1, 3}));
  index.Remove(Key{1, 1, 3}, 100, 8);
  EXPECT_THAT(index.FirstExpiredBy(1000), Optional(Key{1, 0, 5}));
}

TEST(LeaseIndexTest, KnowsWhatEachWorkerHoldsUntilItReleasesIt) {
  LeaseIndex index;
  index.Add(Key{2, 0, 4}, 100, 7);
  index.Add(Key{1, 0, 9}, 100, 7);
  index.Add(Key{1, 0, 1}, 100, 8);
  index.Add(Key{1, 0, 2}, 100, LeaseIndex::kNoHolder);
  EXPECT_THAT(index.HeldBy(7), ElementsAre(Key{1, 0, 9}, Key{2, 0, 4}));
  EXPECT_THAT(index.HeldBy(LeaseIndex::kNoHolder), IsEmpty());
  index.Release(Key{1, 0, 9}, 7);
  EXPECT_THAT(index.HeldBy(7), ElementsAre(Key{2, 0, 4}));
  // A released lease still expires, and its removal names no holder.
  EXPECT_THAT(index.FirstExpiredBy(100), Optional(Key{1, 0, 1}));
  index.Remove(Key{1, 0, 9}, 100, LeaseIndex::kNoHolder);
  index.Remove(Key{1, 0, 1}, 100, 8);
  EXPECT_THAT(index.HeldBy(8), IsEmpty());
  EXPECT_THAT(index.FirstExpiredBy(100), Optional(Key{1, 0, 2}));
}

}  // namespace
}  // namespace stoker
