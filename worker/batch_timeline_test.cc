// A sampled batch's spans in its header (worker/batch_timeline.h), through ProduceBatch.

#include "worker/batch_timeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "trace/span.h"
#include "worker/batch_producer.h"
#include "worker/small_blur_job_for_test.h"
#include "worker/task_id_for_test.h"

namespace stoker {
namespace {

using worker_testing::TaskOf;

namespace pb = ::stoker::v1;
using ::testing::Contains;
using ::testing::ElementsAre;

// Produces `task` as a producer thread does, timeline included.
pb::BatchMessage Produce(JobContext& job, const pb::TaskId& task, const LeaseStart& lease,
                         pb::BatchMessage message = {}) {
  ProducerScratch scratch;
  scratch.workspace.set_time_ops(true);
  scratch.timeline.Begin(job.trace(), task, lease);
  EXPECT_TRUE(ProduceBatch(job, task, 9, &scratch, &message).ok());
  scratch.timeline.End(job.trace(), job.pipeline(), message.mutable_header());
  return message;
}

TEST(BatchTimelineTest, UntracedBatchesCarryNoSpans) {
  auto job = JobContext::Create(1, SmallBlurJobForTest(1, 1), DatasetIo::FromEnvironment());
  ASSERT_TRUE(job.ok()) << job.status();
  pb::BatchMessage reused;
  reused.mutable_header()->mutable_trace()->add_spans();  // a traced batch's pooled message
  const pb::BatchMessage message = Produce(**job, TaskOf(1, 0, 0), LeaseStart{}, reused);
  EXPECT_FALSE(message.header().has_trace());
}

TEST(BatchTimelineTest, SampledBatchesCarryTheirStagesEndToEndOnTheProducerThread) {
  auto job = JobContext::Create(1, SmallBlurJobForTest(1, 1), DatasetIo::FromEnvironment());
  ASSERT_TRUE(job.ok()) << job.status();
  (*job)->trace().SetSampling(1);
  const LeaseStart lease{trace::MonotonicNowNanos(), /*thread_id=*/4242};
  const pb::BatchMessage message = Produce(**job, TaskOf(1, 0, 2), lease);
  ASSERT_TRUE(message.header().has_trace());
  const pb::BatchTrace& spans = message.header().trace();
  ASSERT_GE(spans.spans_size(), 4);

  std::vector<trace::Stage> stages;
  for (const pb::TraceSpan& span : spans.spans()) {
    stages.push_back(static_cast<trace::Stage>(span.stage()));
  }
  EXPECT_EQ(stages.front(), trace::Stage::kLeaseWait);
  EXPECT_EQ(spans.spans(0).thread_id(), 4242u);
  EXPECT_THAT(stages, Contains(trace::Stage::kShardRead));
  EXPECT_THAT(stages, Contains(trace::Stage::kOp));
  EXPECT_EQ(stages.back(), trace::Stage::kEncode);
  EXPECT_THAT(std::vector<std::string>(spans.op_names().begin(), spans.op_names().end()),
              Contains("horizontal_flip"));
  // After the lease wait: one producer thread, each stage starting where the previous ended.
  const uint32_t producer = spans.spans(1).thread_id();
  EXPECT_EQ(spans.thread_names().at(producer), absl::StrCat("producer ", producer));
  for (int i = 1; i < spans.spans_size(); ++i) {
    EXPECT_EQ(spans.spans(i).thread_id(), producer);
    EXPECT_LT(spans.spans(i).start_ns(), spans.spans(i).end_ns());
    if (i > 1) {
      EXPECT_EQ(spans.spans(i).start_ns(), spans.spans(i - 1).end_ns());
    }
  }
  EXPECT_EQ(spans.spans(0).end_ns(), spans.spans(1).start_ns());
}

TEST(BatchTimelineTest, SamplesOneInNByTheTaskHash) {
  auto job = JobContext::Create(1, SmallBlurJobForTest(1, 1), DatasetIo::FromEnvironment());
  ASSERT_TRUE(job.ok()) << job.status();
  (*job)->trace().SetSampling(3);
  std::vector<bool> traced, expected;
  for (uint64_t batch = 0; batch < 6; ++batch) {
    traced.push_back(Produce(**job, TaskOf(1, 0, batch), LeaseStart{}).header().has_trace());
    expected.push_back(trace::TaskHash(trace::TaskKey{1, 0, batch}) % 3 == 0);
  }
  EXPECT_EQ(traced, expected);
}

TEST(BatchTimelineTest, AppendSpanNamesTheThreadAndKeepsTheLimit) {
  pb::BatchHeader header;
  AppendSpan(trace::Stage::kQueue, 10, 20, "stream writer", &header);
  EXPECT_FALSE(header.has_trace());  // untraced: nothing
  header.mutable_trace();
  AppendSpan(trace::Stage::kQueue, 10, 5, "stream writer", &header);
  ASSERT_EQ(header.trace().spans_size(), 1);
  EXPECT_EQ(header.trace().spans(0).end_ns(), 10);  // clamped, never before its start
  EXPECT_THAT(header.trace().thread_names(),
              Contains(::testing::Pair(
                  header.trace().spans(0).thread_id(),
                  absl::StrCat("stream writer ", header.trace().spans(0).thread_id()))));
  for (int i = 0; i < 100; ++i) AppendSpan(trace::Stage::kQueue, 1, 2, "w", &header);
  EXPECT_EQ(header.trace().spans_size(), 64);
}

}  // namespace
}  // namespace stoker
