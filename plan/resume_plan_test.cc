#include "plan/resume_plan.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// 20 samples, batch 2: 10 global batches; drop_last false.
pb::JobSpec Spec(uint32_t world_size, bool drop_last = false) {
  pb::JobSpec spec;
  spec.mutable_dataset()->mutable_synthetic()->set_num_samples(20);
  spec.set_batch_size(2);
  spec.set_seed(7);
  spec.set_world_size(world_size);
  spec.set_epochs(3);
  spec.set_drop_last(drop_last);
  return spec;
}
constexpr uint64_t kSamples = 20;

// A token of a run that never resumed: rank's deal is g ≡ rank (mod world), `prefix` consumed.
pb::ResumeToken Token(const pb::JobSpec& spec, uint32_t rank, uint32_t epoch, uint64_t prefix,
                      std::vector<uint64_t> other = {}) {
  pb::ResumeToken token;
  token.set_version(kResumeTokenVersion);
  token.set_job_name("job");
  token.set_spec_fingerprint(SpecFingerprint(spec));
  token.set_world_size(spec.world_size());
  token.set_rank(rank);
  token.set_epoch(epoch);
  const uint64_t global = 10;
  token.set_universe((global + spec.world_size() - 1) / spec.world_size() * spec.world_size());
  token.set_delivered_prefix(prefix);
  for (auto& range : ToRanges(other)) *token.add_delivered_other() = range;
  return token;
}

std::vector<std::string> Serialize(const std::vector<pb::ResumeToken>& tokens) {
  std::vector<std::string> out;
  for (const auto& token : tokens) out.push_back(token.SerializeAsString());
  return out;
}

TEST(DealTest, SplitsLikeThePlanAndPadsPastTheUniverse) {
  const std::vector<uint64_t> order = {0, 1, 2, 3, 4, 5, 6};
  EXPECT_THAT(Deal(order, 7, 0, 2, false), ElementsAre(0, 2, 4, 6));
  EXPECT_THAT(Deal(order, 7, 1, 2, false), ElementsAre(1, 3, 5, 7));  // 7 is a pad
  EXPECT_THAT(Deal(order, 7, 1, 2, true), ElementsAre(1, 3, 5));      // 6 is dropped
  EXPECT_THAT(Deal({3, 9}, 10, 2, 3, false), ElementsAre(10));
  EXPECT_THAT(Deal({}, 10, 0, 3, false), IsEmpty());
}

TEST(PlanResumeTest, SameWorldSizeKeepsTheDealAndSkipsWhatWasConsumed) {
  const pb::JobSpec spec = Spec(2);
  auto point = PlanResume(Serialize({Token(spec, 1, 1, 2, {9})}), spec, kSamples, 1);
  ASSERT_TRUE(point.ok()) << point.status();
  EXPECT_TRUE(point->resumed());
  EXPECT_EQ(point->epoch(), 1u);
  EXPECT_EQ(point->universe(), 10u);
  EXPECT_THAT(point->deal(), ElementsAre(1, 3, 5, 7, 9));
  EXPECT_THAT(RemainingBatches(*point), ElementsAre(5, 7));
  EXPECT_EQ(point->spec_fingerprint(), SpecFingerprint(spec));
}

TEST(PlanResumeTest, SameWorldSizeUsesTheCallersTokenAmongAll) {
  const pb::JobSpec spec = Spec(2);
  auto point =
      PlanResume(Serialize({Token(spec, 0, 0, 1), Token(spec, 1, 0, 3)}), spec, kSamples, 0);
  ASSERT_TRUE(point.ok()) << point.status();
  EXPECT_THAT(RemainingBatches(*point), ElementsAre(2, 4, 6, 8));
}

TEST(PlanResumeTest, OtherWorldSizeRedealsWhatRemains) {
  const pb::JobSpec old_spec = Spec(2);
  // Rank 0 consumed 0, 2; rank 1 consumed 1. Remaining: 3..9 (7 batches) over 3 ranks.
  const auto tokens = Serialize({Token(old_spec, 0, 0, 2), Token(old_spec, 1, 0, 1)});
  std::multiset<uint64_t> all;
  for (uint32_t rank = 0; rank < 3; ++rank) {
    auto point = PlanResume(tokens, Spec(3), kSamples, rank);
    ASSERT_TRUE(point.ok()) << point.status();
    EXPECT_EQ(point->universe(), 12u);  // 9 slots: 2 pads
    EXPECT_EQ(point->delivered_prefix(), 0u);
    ASSERT_EQ(point->done_before_size(), 1);
    EXPECT_EQ(point->done_before(0).begin(), 0u);
    EXPECT_EQ(point->done_before(0).end(), 3u);
    EXPECT_EQ(point->deal_size(), 3);
    all.insert(point->deal().begin(), point->deal().end());
  }
  EXPECT_THAT(all, ElementsAre(3, 4, 5, 6, 7, 8, 9, 10, 11));
  auto rank0 = PlanResume(tokens, Spec(3), kSamples, 0);
  EXPECT_THAT(rank0->deal(), ElementsAre(3, 6, 9));
}

TEST(PlanResumeTest, ResumingAResumedRunContinuesItsDeal) {
  // 2 -> 3 ranks, then rank 2 of the 3 resumes from its own token having consumed 1 batch.
  const pb::JobSpec old_spec = Spec(2);
  const auto tokens = Serialize({Token(old_spec, 0, 0, 2), Token(old_spec, 1, 0, 1)});
  auto first = PlanResume(tokens, Spec(3), kSamples, 2);
  ASSERT_TRUE(first.ok());
  pb::ResumeToken token = Token(Spec(3), 2, 0, 1);
  token.set_universe(first->universe());
  *token.mutable_done_before() = first->done_before();
  auto second = PlanResume(Serialize({token}), Spec(3), kSamples, 2);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(second->deal(), ElementsAre(5, 8, 11));
  EXPECT_THAT(RemainingBatches(*second), ElementsAre(8, 11));
}

TEST(PlanResumeTest, DropLastDropsTheLeftover) {
  const pb::JobSpec old_spec = Spec(2, true);
  const auto tokens = Serialize({Token(old_spec, 0, 0, 1), Token(old_spec, 1, 0, 0)});
  // Remaining 1..9 (9 batches) over 2... use 4 ranks: 2 each, 1 dropped.
  std::multiset<uint64_t> all;
  for (uint32_t rank = 0; rank < 4; ++rank) {
    auto point = PlanResume(tokens, Spec(4, true), kSamples, rank);
    ASSERT_TRUE(point.ok()) << point.status();
    EXPECT_EQ(point->universe(), 10u);
    all.insert(point->deal().begin(), point->deal().end());
  }
  EXPECT_THAT(all, ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
}

TEST(PlanResumeTest, AfterTheLastEpochNothingRemains) {
  const pb::JobSpec spec = Spec(2);
  auto point = PlanResume(Serialize({Token(spec, 0, 3, 0)}), spec, kSamples, 0);
  ASSERT_TRUE(point.ok()) << point.status();
  EXPECT_EQ(point->epoch(), 3u);
  EXPECT_THAT(point->deal(), IsEmpty());
}

void ExpectInvalid(const absl::StatusOr<pb::ResumePoint>& point, const std::string& substr) {
  EXPECT_EQ(point.status().code(), absl::StatusCode::kInvalidArgument) << point.status();
  EXPECT_THAT(std::string(point.status().message()), HasSubstr(substr));
}

TEST(PlanResumeTest, Errors) {
  const pb::JobSpec spec = Spec(2);
  ExpectInvalid(PlanResume({"\xff\xff garbage"}, spec, kSamples, 0),
                "resume_tokens[0]: not a serialized ResumeToken");
  pb::ResumeToken bad_version = Token(spec, 0, 0, 0);
  bad_version.set_version(9);
  ExpectInvalid(PlanResume(Serialize({bad_version}), spec, kSamples, 0), "version 9");
  pb::ResumeToken other_job = Token(spec, 1, 0, 0);
  other_job.set_job_name("other");
  ExpectInvalid(PlanResume(Serialize({Token(spec, 0, 0, 0), other_job}), spec, kSamples, 0),
                "resume_tokens[1]: job 'other' differs");
  ExpectInvalid(
      PlanResume(Serialize({Token(spec, 0, 0, 0), Token(spec, 1, 1, 0)}), spec, kSamples, 0),
      "resume_tokens[1]: epoch 1 differs");
  ExpectInvalid(
      PlanResume(Serialize({Token(spec, 0, 0, 0), Token(spec, 0, 0, 0)}), spec, kSamples, 0),
      "rank 0 is given twice");
  pb::JobSpec reseeded = spec;
  reseeded.set_seed(99);
  ExpectInvalid(PlanResume(Serialize({Token(spec, 0, 0, 0)}), reseeded, kSamples, 0),
                "only world_size may change");
  ExpectInvalid(PlanResume(Serialize({Token(spec, 0, 4, 0)}), spec, kSamples, 0),
                "epoch 4 is past the job's 3 epochs");
  ExpectInvalid(PlanResume(Serialize({Token(spec, 0, 0, 6)}), spec, kSamples, 0),
                "delivered_prefix 6 is past the rank's 5 batches");
  ExpectInvalid(PlanResume(Serialize({Token(spec, 0, 0, 0, {3})}), spec, kSamples, 0),
                "consumed batch 3 is not one of rank 0's batches");
  ExpectInvalid(PlanResume(Serialize({Token(spec, 0, 0, 0)}), spec, kSamples, 1),
                "none of the 1 tokens is of rank 1");
  ExpectInvalid(PlanResume(Serialize({Token(spec, 0, 0, 0)}), Spec(3), kSamples, 0),
                "resuming with world_size 3 from a checkpoint of world_size 2 needs the tokens "
                "of all 2 ranks, got 1");
  ExpectInvalid(PlanResume({}, spec, kSamples, 0), "resume_tokens: none given");
}

// Found by fuzz_resume_token: a universe or consumed range from a crafted token sized vectors
// (a 2^62-entry reserve) before any limit was checked, crashing the coordinator.
TEST(PlanResumeTest, HugeUniverseOrRangeIsRefusedBeforeAnythingIsSized) {
  const pb::JobSpec spec = Spec(2);
  pb::ResumeToken huge0 = Token(spec, 0, 0, 0);
  pb::ResumeToken huge1 = Token(spec, 1, 0, 0);
  huge0.set_universe(uint64_t{1} << 62);
  huge1.set_universe(uint64_t{1} << 62);
  const std::string limit =
      "resume_tokens[0]: universe 4611686018427387904 is past the epoch's "
      "limit of ";
  ExpectInvalid(PlanResume(Serialize({huge0, huge1}), spec, kSamples, 0), limit);
  ExpectInvalid(PlanResume(Serialize({huge0, huge1}), Spec(3), kSamples, 0), limit);
  pb::ResumeToken wide = Token(spec, 0, 0, 0);
  pb::IndexRange* range = wide.add_delivered_other();
  range->set_begin(0);
  range->set_end(uint64_t{1} << 62);
  ExpectInvalid(PlanResume(Serialize({wide}), spec, kSamples, 0),
                "delivered_other[0]: [0, 4611686018427387904) is empty, unsorted, overlapping or "
                "past the universe 12");
}

// Issue 28: a same-world token whose universe is just under the epoch's limit of a job with
// 4,000,000,000 ranks over one sample made TokenDeal reserve `universe` entries (128 GB,
// std::bad_alloc). The deal is walked from the ranges: four batches, nothing O(universe).
TEST(PlanResumeTest, SameWorldDealIsComputedFromRangesNotTheUniverse) {
  pb::JobSpec spec = Spec(4'000'000'000u);
  spec.set_batch_size(1);
  constexpr uint64_t kOneSample = 1;
  pb::ResumeToken token = Token(spec, 5, 0, 0);
  token.set_universe(16'000'000'000u - 1);  // BatchIndexLimit(4e9, 4e9) = 1.6e10
  pb::IndexRange* done = token.add_done_before();
  done->set_begin(0);
  done->set_end(3);
  auto point = PlanResume(Serialize({token}), spec, kOneSample, 5, /*max_universe=*/UINT64_MAX);
  ASSERT_TRUE(point.ok()) << point.status();
  // Available batches are 3, 4, ...: slot j holds 3 + j; rank 5 has slots 5, 5 + 4e9, ...
  EXPECT_THAT(point->deal(), ElementsAre(8, 4'000'000'008u, 8'000'000'008u, 12'000'000'008u));
}

// The walk over the ranges gives what Deal gives over the explicit list, for every rank.
TEST(PlanResumeTest, DealFromRangesMatchesTheExplicitDeal) {
  for (const bool drop_last : {false, true}) {
    const pb::JobSpec spec = Spec(3, drop_last);
    const std::vector<uint64_t> done_before = {0, 1, 4, 7, 8, 9, 13};
    const uint64_t universe = 17;  // within BatchIndexLimit(12, 3) = 30
    std::vector<uint64_t> available;
    for (uint64_t g = 0; g < universe; ++g) {
      if (std::find(done_before.begin(), done_before.end(), g) == done_before.end()) {
        available.push_back(g);
      }
    }
    for (uint32_t rank = 0; rank < 3; ++rank) {
      pb::ResumeToken token = Token(spec, rank, 0, 0);
      token.set_universe(universe);
      for (auto& range : ToRanges(done_before)) *token.add_done_before() = range;
      auto point = PlanResume(Serialize({token}), spec, kSamples, rank);
      ASSERT_TRUE(point.ok()) << point.status();
      const std::vector<uint64_t> expected = Deal(available, universe, rank, 3, drop_last);
      EXPECT_THAT(point->deal(), ::testing::ElementsAreArray(expected))
          << "rank " << rank << " drop_last " << drop_last;
    }
  }
}

TEST(PlanResumeTest, UniverseOverTheCoordinatorsLimitIsRefused) {
  const pb::JobSpec spec = Spec(2);
  ExpectInvalid(PlanResume(Serialize({Token(spec, 0, 0, 0)}), spec, kSamples, 0,
                           /*max_universe=*/8),
                "resume_tokens[0]: universe 10 is over the coordinator's limit of 8 batches per "
                "resumed epoch (--max-resume-batches)");
}

}  // namespace
}  // namespace stoker
