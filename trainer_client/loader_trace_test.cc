// The Loader's side of batch timelines (client_trace.h) through its heartbeats: while the
// coordinator traces the job, the rank's stages of each batch go out in ClientHeartbeatRequest.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trace/client_trace.h"
#include "trace/span.h"
#include "trainer_client/loader.h"
#include "trainer_client/testing/fake_env.h"
#include "trainer_client/testing/loader_test_fixture.h"

namespace stoker {
namespace {

using ::stoker::testing::kJob;
using ::stoker::testing::LoaderTest;
using ::stoker::testing::MakeBatchMessage;
using ::testing::IsEmpty;

// (batch index, stage name) of the rank's own spans the coordinator received.
std::set<std::pair<uint64_t, std::string>> RankStages(
    const std::vector<v1::TraceProcessSpans>& processes) {
  std::set<std::pair<uint64_t, std::string>> stages;
  for (const v1::TraceProcessSpans& process : processes) {
    if (process.worker_id() != 0) continue;
    for (const v1::TraceSpan& span : process.spans()) {
      stages.emplace(span.task().batch_index(),
                     std::string(trace::StageName(static_cast<trace::Stage>(span.stage()))));
    }
  }
  return stages;
}

class LoaderTraceTest : public LoaderTest {
 protected:
  // A loader of a traced job, its clock offset pinned, with batches 0 and 1 delivered; nullptr
  // (and a failure) when a step fails.
  std::unique_ptr<Loader> OpenTracedWithTwoBatches() {
    coordinator_->AddWorker(1, "w1:1");
    coordinator_->set_trace(1);
    auto loader = OpenOrDie();
    // The first response turned tracing on; these pin the coordinator's clock offset.
    if (loader == nullptr || !Heartbeats(ClientTrace::kSamplesBeforePin + 1)) return nullptr;
    auto stream = streams_->AwaitStream(0);
    EXPECT_NE(stream, nullptr);
    if (stream == nullptr) return nullptr;
    stream->Deliver(MakeBatchMessage(kJob, 0, 0));
    stream->Deliver(MakeBatchMessage(kJob, 0, 1));
    return loader;
  }
};

TEST_F(LoaderTraceTest, WhileTracedItsStagesOfEachBatchGoOutInHeartbeats) {
  auto loader = OpenTracedWithTwoBatches();
  ASSERT_NE(loader, nullptr);
  ASSERT_TRUE(loader->Next().ok());
  ASSERT_TRUE(loader->Next().ok());  // ends batch 0's consumer step
  ASSERT_TRUE(Heartbeats(1));
  const auto stages = RankStages(coordinator_->traced());
  for (uint64_t batch : {0, 1}) {
    EXPECT_TRUE(stages.count({batch, "receive"})) << batch;
    EXPECT_TRUE(stages.count({batch, "buffer_wait"})) << batch;
    EXPECT_TRUE(stages.count({batch, "handoff"})) << batch;
  }
  EXPECT_TRUE(stages.count({0, "consumer_step"}));
}

TEST_F(LoaderTraceTest, ADeviceCopyIsAnH2dSpanBetweenHandoffAndTheConsumersStep) {
  auto loader = OpenTracedWithTwoBatches();
  ASSERT_NE(loader, nullptr);
  absl::StatusOr<Batch> batch = loader->Next();
  ASSERT_TRUE(batch.ok());
  ASSERT_TRUE(loader->Traced(*batch));
  const int64_t copy_start = loader->TraceClockNanos();
  const int64_t copy_end = copy_start + 1000;  // as a DeviceFeeder's caller would time it
  loader->RecordDeviceCopy(*batch, copy_start, copy_end);
  ASSERT_TRUE(loader->Next().ok());
  ASSERT_TRUE(Heartbeats(1));
  std::map<std::string, std::pair<int64_t, int64_t>> batch0;
  for (const v1::TraceProcessSpans& process : coordinator_->traced()) {
    for (const v1::TraceSpan& span : process.spans()) {
      if (process.worker_id() != 0 || span.task().batch_index() != 0) continue;
      batch0[std::string(trace::StageName(static_cast<trace::Stage>(span.stage())))] = {
          span.start_ns(), span.end_ns()};
    }
  }
  ASSERT_TRUE(batch0.count("handoff") && batch0.count("h2d") && batch0.count("consumer_step"));
  EXPECT_EQ(batch0["h2d"].second - batch0["h2d"].first, 1000);
  EXPECT_LE(batch0["handoff"].second, batch0["h2d"].first);
  EXPECT_EQ(batch0["consumer_step"].first, batch0["h2d"].second);
}

TEST_F(LoaderTraceTest, UntracedItShipsNoSpans) {
  coordinator_->AddWorker(1, "w1:1");
  auto loader = OpenOrDie();
  ASSERT_NE(loader, nullptr);
  auto stream = streams_->AwaitStream(0);
  ASSERT_NE(stream, nullptr);
  stream->Deliver(MakeBatchMessage(kJob, 0, 0));
  ASSERT_TRUE(loader->Next().ok());
  ASSERT_TRUE(Heartbeats(ClientTrace::kSamplesBeforePin + 1));
  EXPECT_THAT(coordinator_->traced(), IsEmpty());
}

}  // namespace
}  // namespace stoker
