// The coordinator trace (coordinator_trace.h): StartTrace and GetTrace through the
// Coordinator's RPCs (the exact status codes, what heartbeats carry while a window is open, the
// spans ranks ship and the coordinator's own events), then CoordinatorTrace on its own.

#include "coordinator/coordinator_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/coordinator_test_fixture_for_test.h"
#include "trace/span.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::Contains;
using ::testing::Property;
using ::testing::UnorderedElementsAre;

class CoordinatorTraceTest : public CoordinatorTest {
 protected:
  absl::StatusOr<pb::StartTraceResponse> Start(uint64_t job, uint32_t seconds) {
    pb::StartTraceRequest request;
    request.set_job_id(job);
    request.set_seconds(seconds);
    return coordinator_.StartTrace(request);
  }

  absl::StatusOr<pb::GetTraceResponse> Get(uint64_t job, uint32_t max_spans = 0) {
    pb::GetTraceRequest request;
    request.set_job_id(job);
    request.set_max_spans(max_spans);
    return coordinator_.GetTrace(request);
  }

  // A heartbeat of `rank` carrying one span of each process: its own receive of `task` and a
  // decode of it on `worker`.
  pb::ClientHeartbeatRequest TracedHeartbeat(uint64_t job, uint32_t rank, uint64_t worker,
                                             const TaskId& task) {
    pb::ClientHeartbeatRequest request;
    request.set_job_id(job);
    request.set_rank(rank);
    request.set_client_id("client");
    request.set_client_clock_ns(12345);
    const std::pair<uint64_t, trace::Stage> processes[] = {{0, trace::Stage::kReceive},
                                                           {worker, trace::Stage::kDecode}};
    for (const auto& [worker_id, stage] : processes) {
      pb::TraceProcessSpans* process = request.mutable_trace()->add_processes();
      process->set_worker_id(worker_id);
      (*process->mutable_thread_names())[7] = "thread seven";
      pb::TraceSpan* span = process->add_spans();
      span->set_stage(static_cast<uint32_t>(stage));
      span->set_thread_id(7);
      *span->mutable_task() = task;
      span->set_start_ns(100);
      span->set_end_ns(200);
    }
    return request;
  }
};

TEST_F(CoordinatorTraceTest, StartTraceRefusesSecondsOutsideTheLimitNamingTheField) {
  const uint64_t job = OpenJob("job", SmallJobSpec());
  EXPECT_THAT(Start(job, 0), StatusIs(absl::StatusCode::kInvalidArgument,
                                      HasSubstr("seconds: 0, not in [1, 600]")));
  EXPECT_THAT(Start(job, 601),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("(--max-trace-seconds)")));
}

TEST_F(CoordinatorTraceTest, UnknownJobIsNotFound) {
  const uint64_t job = OpenJob("job", SmallJobSpec());
  EXPECT_THAT(Start(job + 1, 5), StatusIs(absl::StatusCode::kNotFound, HasSubstr("no such job")));
  EXPECT_THAT(Get(job + 1), StatusIs(absl::StatusCode::kNotFound, HasSubstr("no such job")));
  EXPECT_THAT(Get(job), StatusIs(absl::StatusCode::kNotFound, HasSubstr("has no trace")));
}

TEST_F(CoordinatorTraceTest, GetTraceRefusesTooLargeAPage) {
  const uint64_t job = OpenJob("job", SmallJobSpec());
  ASSERT_THAT(Start(job, 5), IsOk());
  EXPECT_THAT(Get(job, 65537), StatusIs(absl::StatusCode::kInvalidArgument,
                                        HasSubstr("max_spans: 65537, over the limit")));
}

TEST_F(CoordinatorTraceTest, HeartbeatsCarryTheWindowOnlyWhileTraced) {
  const uint64_t job = OpenJob("job", SmallJobSpec());
  const uint64_t worker = Register("w:1");
  pb::WorkerHeartbeatRequest beat;
  beat.set_worker_id(worker);
  beat.add_jobs(job);
  ASSERT_THAT(coordinator_.WorkerHeartbeat(beat), IsOk());
  EXPECT_TRUE(coordinator_.WorkerHeartbeat(beat)->trace().empty());
  EXPECT_FALSE(ClientHeartbeat(job, 0)->has_trace());

  pb::StartTraceRequest start;
  start.set_job_id(job);
  start.set_seconds(30);
  start.set_sample_one_in(4);
  ASSERT_THAT(coordinator_.StartTrace(start), IsOk());
  const auto worker_response = coordinator_.WorkerHeartbeat(beat);
  ASSERT_THAT(worker_response, IsOk());
  ASSERT_TRUE(worker_response->trace().contains(job));
  EXPECT_EQ(worker_response->trace().at(job).sample_one_in(), 4u);
  EXPECT_GT(worker_response->trace().at(job).remaining_ms(), 0u);
  const auto client_response = ClientHeartbeat(job, 0);
  ASSERT_THAT(client_response, IsOk());
  EXPECT_EQ(client_response->trace().sample_one_in(), 4u);
}

TEST_F(CoordinatorTraceTest, KeepsRankAndWorkerSpansAndItsOwnEvents) {
  const uint64_t job = OpenJob("job", SmallJobSpec());
  const uint64_t worker = Register("w:1");
  ASSERT_THAT(Start(job, 30), IsOk());
  const auto leased = Lease(worker, job, 0, 1);
  ASSERT_THAT(leased, IsOk());
  ASSERT_EQ(leased->leases_size(), 1);
  const TaskId task = leased->leases(0).task();

  const auto response = coordinator_.ClientHeartbeat(TracedHeartbeat(job, 0, worker, task));
  ASSERT_THAT(response, IsOk());
  EXPECT_GT(response->received_clock_ns(), 0);
  EXPECT_GE(response->sent_clock_ns(), response->received_clock_ns());

  const auto page = Get(job);
  ASSERT_THAT(page, IsOk());
  EXPECT_TRUE(page->tracing());
  EXPECT_THAT(page->processes(),
              Contains(Property(&pb::TraceProcessSpans::process, "coordinator")));
  EXPECT_THAT(page->processes(), Contains(Property(&pb::TraceProcessSpans::process, "rank 0")));
  EXPECT_THAT(page->processes(), Contains(Property(&pb::TraceProcessSpans::process, "worker w:1")));
  for (const pb::TraceProcessSpans& process : page->processes()) {
    if (process.process() == "coordinator") {
      EXPECT_EQ(process.spans(0).stage(), static_cast<uint32_t>(trace::Stage::kLeaseGranted));
    } else {
      ASSERT_EQ(process.spans_size(), 1);
      EXPECT_EQ(process.spans(0).end_ns(), 200);
      EXPECT_EQ(process.thread_names().at(7), "thread seven");
    }
  }
}

TEST_F(CoordinatorTraceTest, RefusesHeartbeatSpansOverTheLimitsNamingTheField) {
  const uint64_t job = OpenJob("job", SmallJobSpec());
  const uint64_t worker = Register("w:1");
  TaskId task;
  task.set_job_id(job);
  pb::ClientHeartbeatRequest request = TracedHeartbeat(job, 0, worker, task);
  request.mutable_trace()->mutable_processes(1)->mutable_spans(0)->set_end_ns(0);
  EXPECT_THAT(coordinator_.ClientHeartbeat(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("trace.processes[1].spans[0]: end_ns 0 is before")));
}

TEST_F(CoordinatorTraceTest, KeepsAtMostMaxTraceSpansAJobAndCountsTheRest) {
  CoordinatorConfig config = TestCoordinatorConfig();
  config.max_trace_spans = 1;
  Coordinator coordinator(config, &clock_, nullptr, TestSourceFactory());
  pb::OpenJobRequest open;
  open.set_name("job");
  *open.mutable_spec() = SmallJobSpec();
  const auto job = coordinator.OpenJob(open);
  ASSERT_THAT(job, IsOk());
  pb::StartTraceRequest start;
  start.set_job_id(job->job_id());
  start.set_seconds(30);
  ASSERT_THAT(coordinator.StartTrace(start), IsOk());
  TaskId task;
  task.set_job_id(job->job_id());
  ASSERT_THAT(coordinator.ClientHeartbeat(TracedHeartbeat(job->job_id(), 0, 0, task)), IsOk());
  pb::GetTraceRequest get;
  get.set_job_id(job->job_id());
  const auto page = coordinator.GetTrace(get);
  ASSERT_THAT(page, IsOk());
  int spans = 0;
  for (const pb::TraceProcessSpans& process : page->processes()) spans += process.spans_size();
  EXPECT_EQ(spans, 1);
  EXPECT_EQ(page->dropped_spans(), 1u);  // worker id 0: both entries are the rank's own
}

TEST_F(CoordinatorTraceTest, DropsSpansOfOtherJobsAndUnknownWorkers) {
  const uint64_t job = OpenJob("job", SmallJobSpec());
  ASSERT_THAT(Start(job, 30), IsOk());
  TaskId other;
  other.set_job_id(job + 1);
  ASSERT_THAT(coordinator_.ClientHeartbeat(TracedHeartbeat(job, 0, /*worker=*/999, other)), IsOk());
  const auto page = Get(job);
  ASSERT_THAT(page, IsOk());
  for (const pb::TraceProcessSpans& process : page->processes()) {
    EXPECT_EQ(process.spans_size(), 0) << process.process();
    EXPECT_NE(process.process(), "worker ");
  }
}

// CoordinatorTrace on its own, on a fake monotonic clock: the exact window, clock offsets and
// process names its heartbeat answers carry.
class CoordinatorTraceUnitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pb::StartTraceRequest start;
    start.set_job_id(kJob);
    start.set_seconds(30);
    start.set_sample_one_in(4);
    ASSERT_THAT(trace_.Start(start), IsOk());
  }

  static constexpr uint64_t kJob = 5;
  FakeClock clock_{absl::FromUnixNanos(1'000'000'000)};
  CoordinatorTrace trace_{CoordinatorTrace::Options{.clock = &clock_}};
};

TEST_F(CoordinatorTraceUnitTest, AClientHeartbeatGetsTheWindowAndBothClockReadings) {
  pb::ClientHeartbeatRequest request;
  request.set_job_id(kJob);
  request.set_client_clock_ns(12345);
  clock_.Advance(absl::Seconds(10));  // 10 s into the 30 s window
  pb::ClientHeartbeatResponse response;
  trace_.AnswerClientHeartbeat(request, {}, /*received_ns=*/777, &response);
  EXPECT_EQ(response.trace().sample_one_in(), 4u);
  EXPECT_EQ(response.trace().remaining_ms(), 20'000u);
  EXPECT_EQ(response.received_clock_ns(), 777);
  EXPECT_EQ(response.sent_clock_ns(), 11'000'000'000);

  request.set_job_id(kJob + 1);  // not traced, and no clock asked for
  request.set_client_clock_ns(0);
  pb::ClientHeartbeatResponse untraced;
  trace_.AnswerClientHeartbeat(request, {}, 777, &untraced);
  EXPECT_FALSE(untraced.has_trace());
  EXPECT_EQ(untraced.received_clock_ns(), 0);
  EXPECT_EQ(untraced.sent_clock_ns(), 0);
}

TEST_F(CoordinatorTraceUnitTest, AClientHeartbeatsSpansAreNamedAfterTheRankAndKnownWorkers) {
  pb::ClientHeartbeatRequest request;
  request.set_job_id(kJob);
  request.set_rank(3);
  for (const uint64_t worker_id : {0, 7, 8}) {  // the rank itself, a known and an unknown worker
    pb::TraceProcessSpans* process = request.mutable_trace()->add_processes();
    process->set_worker_id(worker_id);
    pb::TraceSpan* span = process->add_spans();
    span->set_stage(static_cast<uint32_t>(trace::Stage::kReceive));
    span->mutable_task()->set_job_id(kJob);
    span->set_start_ns(100);
    span->set_end_ns(200);
  }
  WorkerRecord known;
  known.id = 7;
  known.address = "w:7";
  pb::ClientHeartbeatResponse response;
  trace_.AnswerClientHeartbeat(request, {known}, 0, &response);
  pb::GetTraceRequest get;
  get.set_job_id(kJob);
  const auto page = trace_.Read(get);
  ASSERT_THAT(page, IsOk());
  std::vector<std::string> names;
  for (const pb::TraceProcessSpans& process : page->processes()) names.push_back(process.process());
  EXPECT_THAT(names, UnorderedElementsAre("rank 3", "worker w:7"));
}

TEST_F(CoordinatorTraceUnitTest, AWorkerHeartbeatGetsTheWindowOfEachTracedJobItHolds) {
  pb::WorkerHeartbeatRequest request;
  request.add_jobs(kJob);
  request.add_jobs(kJob + 1);
  pb::WorkerHeartbeatResponse response;
  trace_.AnswerWorkerHeartbeat(request, &response);
  ASSERT_EQ(response.trace().size(), 1u);
  EXPECT_EQ(response.trace().at(kJob).remaining_ms(), 30'000u);
  clock_.Advance(absl::Seconds(31));  // the window has ended
  pb::WorkerHeartbeatResponse after;
  trace_.AnswerWorkerHeartbeat(request, &after);
  EXPECT_TRUE(after.trace().empty());
}

}  // namespace
}  // namespace stoker
