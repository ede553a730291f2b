#include "plan/resume_token.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

pb::JobSpec SpecOfWorldSize(uint32_t world_size) {
  pb::JobSpec spec;
  spec.mutable_dataset()->mutable_synthetic()->set_num_samples(20);
  spec.set_batch_size(2);
  spec.set_seed(7);
  spec.set_world_size(world_size);
  spec.set_epochs(3);
  return spec;
}

TEST(RangesTest, RoundTrip) {
  const std::vector<uint64_t> sorted = {1, 2, 3, 7, 9, 10};
  std::vector<pb::IndexRange> ranges = ToRanges(sorted);
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0].begin(), 1u);
  EXPECT_EQ(ranges[0].end(), 4u);
  google::protobuf::RepeatedPtrField<pb::IndexRange> field(ranges.begin(), ranges.end());
  EXPECT_EQ(FromRanges(field), sorted);
}

TEST(SpecFingerprintTest, IgnoresWorldSizeOnly) {
  EXPECT_EQ(SpecFingerprint(SpecOfWorldSize(2)), SpecFingerprint(SpecOfWorldSize(3)));
  pb::JobSpec other = SpecOfWorldSize(2);
  other.set_seed(8);
  EXPECT_NE(SpecFingerprint(SpecOfWorldSize(2)), SpecFingerprint(other));
}

TEST(JobSpecHashTest, IsPinned) {
  // The hash names default jobs and fingerprints tokens: it must not change across builds.
  pb::JobSpec spec;
  EXPECT_EQ(JobSpecHash(spec), 14695981039346656037ull);  // FNV-1a of no bytes
  EXPECT_NE(JobSpecHash(SpecOfWorldSize(2)), JobSpecHash(SpecOfWorldSize(3)));
}

RankPosition Position(uint32_t epoch, uint64_t prefix, std::vector<uint64_t> other) {
  RankPosition position;
  position.job_name = "job";
  position.world_size = 2;
  position.rank = 1;
  position.batches_per_rank = 5;
  position.epoch = epoch;
  position.prefix = prefix;
  position.other = std::move(other);
  return position;
}

TEST(ResumeTokenTest, EncodesAPlainRunAndDecodesIt) {
  pb::ResumePoint start;
  start.set_spec_fingerprint(42);
  absl::StatusOr<pb::ResumeToken> token =
      DecodeResumeToken(EncodeResumeToken(start, Position(1, 2, {7, 9})));
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(token->version(), kResumeTokenVersion);
  EXPECT_EQ(token->job_name(), "job");
  EXPECT_EQ(token->spec_fingerprint(), 42u);
  EXPECT_EQ(token->world_size(), 2u);
  EXPECT_EQ(token->rank(), 1u);
  EXPECT_EQ(token->epoch(), 1u);
  EXPECT_EQ(token->universe(), 10u);  // the plan's own: 5 batches per rank, 2 ranks
  EXPECT_EQ(token->done_before_size(), 0);
  EXPECT_EQ(token->delivered_prefix(), 2u);
  EXPECT_THAT(FromRanges(token->delivered_other()), ElementsAre(7, 9));
  EXPECT_EQ(token->delivered_other_size(), 2);
}

TEST(ResumeTokenTest, KeepsTheResumedEpochsUniverseOnlyInThatEpoch) {
  pb::ResumePoint start;
  start.set_resumed(true);
  start.set_epoch(1);
  start.set_universe(12);
  pb::IndexRange* done = start.add_done_before();
  done->set_begin(0);
  done->set_end(3);
  absl::StatusOr<pb::ResumeToken> same =
      DecodeResumeToken(EncodeResumeToken(start, Position(1, 0, {})));
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->universe(), 12u);
  EXPECT_THAT(FromRanges(same->done_before()), ElementsAre(0, 1, 2));
  absl::StatusOr<pb::ResumeToken> later =
      DecodeResumeToken(EncodeResumeToken(start, Position(2, 0, {})));
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ(later->universe(), 10u);
  EXPECT_EQ(later->done_before_size(), 0);
}

TEST(ResumeTokenTest, DecodeRefusesGarbageAndOtherVersions) {
  absl::StatusOr<pb::ResumeToken> garbage = DecodeResumeToken("\xff\xff garbage");
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(garbage.status().message()),
              HasSubstr("not a serialized ResumeToken (it does not parse)"));
  pb::ResumeToken other;
  other.set_version(kResumeTokenVersion + 1);
  absl::StatusOr<pb::ResumeToken> newer = DecodeResumeToken(other.SerializeAsString());
  EXPECT_EQ(newer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(newer.status().message()),
              HasSubstr("version 3 is not supported (want 2)"));
  pb::ResumeToken older;
  older.set_version(1);
  absl::StatusOr<pb::ResumeToken> old = DecodeResumeToken(older.SerializeAsString());
  EXPECT_EQ(old.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(old.status().message()),
      HasSubstr("resume token version 1 was made by an older Stoker whose shuffle differs"));
}

TEST(ConsumedBeforeResumeTest, MarksThePrefixAndTheOthers) {
  pb::ResumePoint point;
  point.set_resumed(true);
  for (uint64_t g : {4, 6, 8, 10, 12}) point.add_deal(g);
  point.set_delivered_prefix(1);
  pb::IndexRange* other = point.add_delivered_other();
  other->set_begin(10);
  other->set_end(11);
  EXPECT_THAT(ConsumedBeforeResume(point), ElementsAre(true, false, false, true, false));
  point.set_resumed(false);
  EXPECT_THAT(ConsumedBeforeResume(point), ElementsAre(false, false, false, false, false));
}

}  // namespace
}  // namespace stoker
