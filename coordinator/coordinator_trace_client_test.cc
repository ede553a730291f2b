// CollectTrace (coordinator/coordinator_trace_client.h) against a fake coordinator: the pages it
// reads, how it merges them per process and orders the processes, and that it stops once the window
// closed.

#include "coordinator/coordinator_trace_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "trace/trace_proto.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::SizeIs;

pb::TraceProcessSpans Process(const std::string& name, int spans) {
  pb::TraceProcessSpans process;
  process.set_process(name);
  (*process.mutable_thread_names())[1] = "t";
  for (int i = 0; i < spans; ++i) {
    pb::TraceSpan* span = process.add_spans();
    span->set_stage(static_cast<uint32_t>(trace::Stage::kDecode));
    span->set_thread_id(1);
    span->set_start_ns(i * 10);
    span->set_end_ns(i * 10 + 5);
  }
  return process;
}

class FakeCoordinator : public CoordinatorClient {
 public:
  absl::StatusOr<pb::StartTraceResponse> StartTrace(const pb::StartTraceRequest& request) override {
    started.push_back(request);
    if (request.seconds() == 0) return absl::InvalidArgumentError("seconds: 0");
    return pb::StartTraceResponse();
  }
  absl::StatusOr<pb::GetTraceResponse> GetTrace(const pb::GetTraceRequest& request) override {
    tokens.push_back(request.page_token());
    if (pages.empty()) return absl::InternalError("read past the last page");
    pb::GetTraceResponse page = pages.front();
    pages.pop_front();
    return page;
  }

  std::vector<pb::StartTraceRequest> started;
  std::vector<uint64_t> tokens;
  std::deque<pb::GetTraceResponse> pages;
};

pb::GetTraceResponse Page(std::vector<pb::TraceProcessSpans> processes, uint64_t next,
                          bool tracing) {
  pb::GetTraceResponse page;
  for (pb::TraceProcessSpans& process : processes) *page.add_processes() = std::move(process);
  page.set_next_page_token(next);
  page.set_tracing(tracing);
  return page;
}

TEST(CollectTraceTest, ReadsEveryPageUntilTheWindowClosesAndMergesPerProcess) {
  FakeCoordinator coordinator;
  coordinator.pages = {
      Page({Process("rank 10", 2), Process("worker b:1", 1)}, 4, true),
      Page({}, 4, true),  // caught up: the collector waits, then asks again
      Page({Process("rank 2", 1), Process("rank 10", 1), Process("coordinator", 1)}, 7, false),
      Page({Process("worker a:1", 1)}, 0, false),
  };
  SleepRecordingClock clock;
  const auto collected = CollectTrace(
      coordinator,
      CollectTraceOptions{.job_id = 9, .seconds = 3, .sample_one_in = 2, .clock = &clock});
  ASSERT_TRUE(collected.ok()) << collected.status();
  EXPECT_EQ(coordinator.started.at(0).job_id(), 9u);
  EXPECT_EQ(coordinator.started.at(0).sample_one_in(), 2u);
  EXPECT_THAT(coordinator.tokens, ElementsAre(0, 4, 4, 7));
  using P = trace::TraceProcess;
  EXPECT_THAT(collected->processes,
              ElementsAre(Field(&P::name, "coordinator"), Field(&P::name, "worker a:1"),
                          Field(&P::name, "worker b:1"), Field(&P::name, "rank 2"),
                          Field(&P::name, "rank 10")));
  EXPECT_THAT(collected->processes.back().spans, SizeIs(3));
}

TEST(CollectTraceTest, PassesTheCoordinatorsRefusalOn) {
  FakeCoordinator coordinator;
  SleepRecordingClock clock;
  const auto collected =
      CollectTrace(coordinator, CollectTraceOptions{.job_id = 9, .seconds = 0, .clock = &clock});
  EXPECT_EQ(collected.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CollectTraceTest, GivesUpWhenTheWindowNeverCloses) {
  FakeCoordinator coordinator;
  for (int i = 0; i < 1000; ++i) coordinator.pages.push_back(Page({}, 1, true));
  SleepRecordingClock clock;
  const auto collected =
      CollectTrace(coordinator, CollectTraceOptions{.job_id = 9, .seconds = 1, .clock = &clock});
  EXPECT_EQ(collected.status().code(), absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace stoker
