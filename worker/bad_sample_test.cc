// Bad samples in ProduceBatch: replacement by the next good sample of the plan, counting,
// and the bounded search (docs/architecture.md, Bad input).

#include "common/bad_sample.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/batch_producer.h"
#include "worker/task_id_for_test.h"

namespace stoker {
namespace {

using worker_testing::TaskOf;

namespace pb = ::stoker::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

// 2×2 grey images whose pixels and label are the index; the indices in `bad` fail with
// `reason`, and `unavailable` fails with UNAVAILABLE.
class FlakySource : public Source {
 public:
  FlakySource(uint64_t n, std::set<uint64_t> bad, BadSampleReason reason,
              uint64_t unavailable = UINT64_MAX)
      : n_(n), bad_(std::move(bad)), reason_(reason), unavailable_(unavailable) {}
  uint64_t size() const override { return n_; }
  InputFormat format() const override {
    return InputFormat::Decoded(ImageShape{2, 2, 1, PixelType::kUint8});
  }
  absl::Status Read(uint64_t index, SampleBuffer* sample) const override {
    if (bad_.count(index)) return BadSampleError(reason_, absl::StrCat("bad ", index));
    if (index == unavailable_) return absl::UnavailableError("disk went away");
    sample->image.Reshape(format().shape);
    std::memset(sample->image.view().data, static_cast<int>(index), 4);
    sample->label = static_cast<int64_t>(index);
    return absl::OkStatus();
  }
  std::string Locate(uint64_t index) const override { return absl::StrCat("flaky ", index); }

 private:
  uint64_t n_;
  std::set<uint64_t> bad_;
  BadSampleReason reason_;
  uint64_t unavailable_;
};

pb::JobSpec PlainJob(uint64_t batch_size) {
  pb::JobSpec spec;
  spec.mutable_dataset()->mutable_synthetic();  // Unused: the source is injected.
  spec.set_batch_size(static_cast<uint32_t>(batch_size));
  spec.set_shuffle(pb::SHUFFLE_MODE_NONE);
  spec.set_world_size(1);
  spec.set_epochs(1);
  return spec;
}

std::vector<uint64_t> Indices(const pb::BatchMessage& batch) {
  return {batch.header().sample_indices().begin(), batch.header().sample_indices().end()};
}

TEST(BadSampleTest, ReplacedByTheNextGoodSampleOfThePlan) {
  auto job = JobContext::Create(1, PlainJob(4),
                                std::make_unique<FlakySource>(12, std::set<uint64_t>{2, 6, 7},
                                                              BadSampleReason::kCorruptRecord));
  ASSERT_TRUE(job.ok()) << job.status();
  ProducerScratch scratch;
  BadSampleCounters counters;
  pb::BatchMessage batch;
  ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 0, 0), 1, &scratch, &batch, &counters).ok());
  EXPECT_THAT(Indices(batch), ElementsAre(0, 1, 3, 3));
  EXPECT_THAT(batch.header().labels(), ElementsAre(0, 1, 3, 3));
  EXPECT_EQ(batch.data()[2 * 4], 3);  // Slot 2 (4 bytes a sample) holds the replacement.
  EXPECT_THAT(batch.header().bad_samples(), UnorderedElementsAre(Pair("corrupt_record", 1)));

  // Two bad in a row at the end of a batch: both replaced by 8, the next good one.
  ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 0, 1), 1, &scratch, &batch, &counters).ok());
  EXPECT_THAT(Indices(batch), ElementsAre(4, 5, 8, 8));
  EXPECT_THAT(batch.header().bad_samples(), UnorderedElementsAre(Pair("corrupt_record", 2)));
  EXPECT_EQ(counters.count(BadSampleReason::kCorruptRecord), 3u);

  // A clean batch carries no counts, even in a reused message.
  ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 0, 2), 1, &scratch, &batch, &counters).ok());
  EXPECT_TRUE(batch.header().bad_samples().empty());
}

TEST(BadSampleTest, EachBadSampleIsReportedOncePerJob) {
  auto job = JobContext::Create(
      1, PlainJob(4),
      std::make_unique<FlakySource>(8, std::set<uint64_t>{}, BadSampleReason::kReadError));
  ASSERT_TRUE(job.ok());
  EXPECT_TRUE((*job)->FirstBadSampleReport(5));
  EXPECT_FALSE((*job)->FirstBadSampleReport(5));
  EXPECT_TRUE((*job)->FirstBadSampleReport(6));
}

TEST(BadSampleTest, ReplacementWrapsAroundTheOrder) {
  auto job = JobContext::Create(
      1, PlainJob(4),
      std::make_unique<FlakySource>(8, std::set<uint64_t>{7}, BadSampleReason::kReadError));
  ProducerScratch scratch;
  pb::BatchMessage batch;
  ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 0, 1), 1, &scratch, &batch).ok());
  EXPECT_THAT(Indices(batch), ElementsAre(4, 5, 6, 0));
}

TEST(BadSampleTest, TooManyBadInARowFailsTheBatch) {
  std::set<uint64_t> all;
  for (uint64_t i = 0; i < 2000; ++i) all.insert(i);
  auto job = JobContext::Create(
      1, PlainJob(4), std::make_unique<FlakySource>(2000, all, BadSampleReason::kDecodeError));
  ProducerScratch scratch;
  pb::BatchMessage batch;
  absl::Status status = ProduceBatch(**job, TaskOf(1, 0, 0), 1, &scratch, &batch);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_FALSE(BadSampleReasonOf(status).has_value());
  EXPECT_THAT(std::string(status.message()), HasSubstr("the 1000 samples after it"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("flaky 0"));
}

TEST(BadSampleTest, OtherErrorsFailTheBatch) {
  auto job = JobContext::Create(
      1, PlainJob(4),
      std::make_unique<FlakySource>(8, std::set<uint64_t>{1}, BadSampleReason::kReadError, 2));
  ProducerScratch scratch;
  pb::BatchMessage batch;
  EXPECT_EQ(ProduceBatch(**job, TaskOf(1, 0, 0), 1, &scratch, &batch).code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace stoker
