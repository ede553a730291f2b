#include "plan/rank_sequence.h"

#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

// Every (epoch, position) of the sequence in sequence order, checked against TaskAt / SeqOf.
void ExpectConsistent(const RankSequence& sequence) {
  uint64_t seq = 0;
  for (uint32_t epoch = 0; epoch < sequence.epochs(); ++epoch) {
    for (uint64_t position = 0; position < sequence.BatchesIn(epoch); ++position, ++seq) {
      const uint64_t g = sequence.BatchAt(epoch, position);
      EXPECT_EQ(sequence.PositionOf(epoch, g), position) << "epoch " << epoch << " g " << g;
      EXPECT_EQ(sequence.SeqOf(epoch, g), seq);
      const RankSequence::Task task = sequence.TaskAt(seq);
      EXPECT_EQ(task.epoch, epoch);
      EXPECT_EQ(task.batch_index, g);
    }
  }
  EXPECT_EQ(seq, sequence.size());
}

TEST(RankSequenceTest, PlainRankFollowsThePlan) {
  // Rank 1 of 3, 4 batches per rank, 2 epochs: g = 1, 4, 7, 10 in each epoch.
  const RankSequence sequence(1, 3, 4, 2);
  EXPECT_FALSE(sequence.resumed());
  EXPECT_EQ(sequence.first_epoch(), 0u);
  EXPECT_TRUE(sequence.first_batches().empty());
  EXPECT_EQ(sequence.size(), 8u);
  EXPECT_EQ(sequence.BatchesIn(0), 4u);
  EXPECT_EQ(sequence.BatchesIn(2), 0u);
  EXPECT_EQ(sequence.BatchAt(1, 3), 10u);
  EXPECT_EQ(sequence.PositionOf(0, 7), 2u);
  EXPECT_EQ(sequence.PositionOf(0, 8), std::nullopt);   // rank 2's
  EXPECT_EQ(sequence.PositionOf(0, 13), std::nullopt);  // past the plan
  EXPECT_EQ(sequence.PositionOf(2, 1), std::nullopt);   // past the last epoch
  EXPECT_EQ(sequence.SeqOf(1, 4), 5u);
  EXPECT_EQ(sequence.TaskAt(6).epoch, 1u);
  EXPECT_EQ(sequence.TaskAt(6).batch_index, 7u);
  EXPECT_TRUE(sequence.CheckResumed("batches").ok());
  ExpectConsistent(sequence);
}

TEST(RankSequenceTest, ResumedRankStartsWithItsListThenThePlan) {
  // Rank 0 of 2, 3 batches per rank, 3 epochs, resumed in epoch 1 with batches 5, 2, 6 (a pad).
  const RankSequence sequence = RankSequence::Resumed(0, 2, 3, 3, 1, {5, 2, 6});
  EXPECT_TRUE(sequence.resumed());
  EXPECT_EQ(sequence.first_epoch(), 1u);
  EXPECT_EQ(sequence.first_batches(), (std::vector<uint64_t>{5, 2, 6}));
  EXPECT_EQ(sequence.BatchesIn(0), 0u);  // before the resume: not part of the sequence
  EXPECT_EQ(sequence.BatchesIn(1), 3u);
  EXPECT_EQ(sequence.BatchesIn(2), 3u);
  EXPECT_EQ(sequence.size(), 6u);
  EXPECT_EQ(sequence.PositionOf(0, 0), std::nullopt);
  EXPECT_EQ(sequence.PositionOf(1, 0), std::nullopt);  // rank 0's in the plan, not in the list
  EXPECT_EQ(sequence.PositionOf(1, 5), 0u);            // rank 1's in the plan, in the list
  EXPECT_EQ(sequence.SeqOf(1, 6), 2u);
  EXPECT_EQ(sequence.SeqOf(2, 4), 5u);  // |list| + position 2 of epoch 2
  EXPECT_EQ(sequence.TaskAt(3).epoch, 2u);
  EXPECT_EQ(sequence.TaskAt(3).batch_index, 0u);
  ExpectConsistent(sequence);
}

TEST(RankSequenceTest, ResumedAtTheEndIsEmpty) {
  const RankSequence sequence = RankSequence::Resumed(0, 2, 3, 3, 3, {});
  EXPECT_EQ(sequence.size(), 0u);
  EXPECT_EQ(sequence.BatchesIn(2), 0u);
  EXPECT_EQ(sequence.SeqOf(2, 0), std::nullopt);
}

TEST(RankSequenceTest, CopiesShareTheList) {
  const RankSequence sequence = RankSequence::Resumed(1, 2, 3, 2, 0, {3, 1});
  const RankSequence copy = sequence;
  EXPECT_EQ(&copy.first_batches(), &sequence.first_batches());
  EXPECT_EQ(copy.SeqOf(0, 1), 1u);
}

TEST(RankSequenceTest, CheckResumedNamesTheBadBatch) {
  // 2 ranks, 3 batches per rank: the limit is 2 * 6 + 2 * 2 = 16.
  const absl::Status twice = RankSequence::Resumed(0, 2, 3, 2, 0, {4, 1, 4}).CheckResumed("b");
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(twice.message()),
              HasSubstr("b[2]: batch 4 is listed twice or past the limit 16"));
  const absl::Status past = RankSequence::Resumed(0, 2, 3, 2, 0, {15, 16}).CheckResumed("b");
  EXPECT_EQ(past.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(past.message()), HasSubstr("b[1]: batch 16 is listed twice"));
  EXPECT_TRUE(RankSequence::Resumed(0, 2, 3, 2, 0, {15, 0}).CheckResumed("b").ok());
}

}  // namespace
}  // namespace stoker
