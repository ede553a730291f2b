// The client's spans and clock hops (client_trace.h) with a fake clock.

#include "trace/client_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "trace/trace_proto.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

pb::TaskId Task(uint64_t batch) {
  pb::TaskId task;
  task.set_job_id(1);
  task.set_batch_index(batch);
  return task;
}

// A worker's batch header: decode [100, 200] and a queue span, worker clock; with its
// credit instants, a hop-1 sample of offset 8950 ns (worker - client), bound 50 ns.
pb::BatchHeader WorkerHeader(uint64_t batch) {
  pb::BatchHeader header;
  *header.mutable_task() = Task(batch);
  header.set_worker_id(77);
  pb::BatchTrace* batch_trace = header.mutable_trace();
  for (auto [stage, start, end] : {std::tuple{trace::Stage::kDecode, 100, 200},
                                   std::tuple{trace::Stage::kQueue, 200, 10600}}) {
    pb::TraceSpan* span = batch_trace->add_spans();
    span->set_stage(static_cast<uint32_t>(stage));
    span->set_thread_id(stage == trace::Stage::kQueue ? 9 : 3);
    span->set_start_ns(start);
    span->set_end_ns(end);
  }
  (*batch_trace->mutable_thread_names())[3] = "producer";
  batch_trace->set_credit_client_ns(1500);
  batch_trace->set_credit_received_ns(10500);
  batch_trace->set_send_ns(10600);
  return header;
}

class ClientTraceTest : public ::testing::Test {
 protected:
  // A heartbeat round trip from `t0`: the coordinator's receive and send at `coordinator_ns`,
  // the response back at `t3` (client clock).
  void Heartbeat(int64_t t0, int64_t coordinator_ns, int64_t t3) {
    pb::ClientHeartbeatResponse response;
    response.mutable_trace()->set_sample_one_in(1);
    response.set_received_clock_ns(coordinator_ns);
    response.set_sent_clock_ns(coordinator_ns);
    SetNow(t3);
    trace_.OnHeartbeatResponse(t0, response);
  }

  // Turns tracing on; the window's first kSamplesBeforePin round trips pin the coordinator's
  // offset at the tightest: +3500 ns, bound 500 ns (the others: 2,000 ns round trips).
  void TurnOn() {
    pb::ClientHeartbeatResponse response;
    response.mutable_trace()->set_sample_one_in(1);
    trace_.OnHeartbeatResponse(0, response);
    ASSERT_TRUE(trace_.on());
    for (int i = 1; i < ClientTrace::kSamplesBeforePin; ++i) Heartbeat(1, 4000, 2000);
    Heartbeat(1000, 5000, 2000);
  }

  // Sets the client's clock to `ns` (it may go back: the instants are what the test names).
  void SetNow(int64_t ns) { clock_.Advance(absl::FromUnixNanos(ns) - clock_.Now()); }

  FakeClock clock_{absl::UnixEpoch()};
  ClientTrace trace_{&clock_};
};

TEST_F(ClientTraceTest, OffCostsNothingAndShipsNothing) {
  EXPECT_FALSE(trace_.on());
  EXPECT_FALSE(trace_.Sampled(Task(1)));
  EXPECT_EQ(trace_.ClockIfOn(), 0);
  pb::ClientHeartbeatRequest request;
  trace_.FillHeartbeat(&request);
  EXPECT_FALSE(request.has_trace());
}

TEST_F(ClientTraceTest, MovesWorkerAndOwnSpansIntoTheCoordinatorsClock) {
  TurnOn();
  trace_.OnWorkerSpans(WorkerHeader(4), /*arrived_ns=*/1700);
  trace_.Record(trace::Stage::kReceive, Task(4), 1700, 1800, "stream reader");

  pb::ClientHeartbeatRequest request;
  trace_.FillHeartbeat(&request);
  ASSERT_TRUE(trace::CheckTraceSpans(request.trace(), "trace").ok());
  ASSERT_EQ(request.trace().processes_size(), 2);
  const pb::TraceProcessSpans& own = request.trace().processes(0);
  EXPECT_EQ(own.worker_id(), 0u);
  EXPECT_EQ(own.spans(0).start_ns(), 1700 + 3500);
  EXPECT_EQ(own.clock_error_bound_ns(), 500);
  const pb::TraceProcessSpans& worker = request.trace().processes(1);
  EXPECT_EQ(worker.worker_id(), 77u);
  EXPECT_EQ(worker.clock_error_bound_ns(), 50 + 500);
  ASSERT_EQ(worker.spans_size(), 3);  // decode, queue, and the send the client adds
  EXPECT_EQ(worker.spans(0).start_ns(), 100 - 8950 + 3500);
  EXPECT_EQ(worker.spans(0).task().batch_index(), 4u);
  EXPECT_EQ(worker.spans(2).stage(), static_cast<uint32_t>(trace::Stage::kSend));
  EXPECT_EQ(worker.spans(2).thread_id(), 9u);
  EXPECT_EQ(worker.spans(2).start_ns(), 10600 - 8950 + 3500);
  EXPECT_EQ(worker.spans(2).end_ns(), 1700 + 3500);
  EXPECT_EQ(worker.thread_names().at(3), "producer");

  pb::ClientHeartbeatRequest next;  // everything went out once
  trace_.FillHeartbeat(&next);
  EXPECT_FALSE(next.has_trace());
}

// The consumer's stages of one sampled batch, in the coordinator's clock (offset +3500 ns):
// buffer_wait from its acceptance to the pop, handoff to the hand-out, h2d as the caller timed
// it, and the step from the copy's end to the next Next.
TEST_F(ClientTraceTest, ConsumerStagesFollowTheBatchFromBufferToTheNextCall) {
  TurnOn();
  trace_.OnAccepted(Task(5), 100);
  SetNow(300);
  trace_.OnPopped(Task(5));
  trace_.OnHandedOut(Task(6));  // not the batch popped last: ignored
  SetNow(400);
  trace_.OnHandedOut(Task(5));
  trace_.OnDeviceCopy(Task(5), 450, 600);
  SetNow(900);
  trace_.OnNextCalled();
  trace_.OnNextCalled();  // no step open: nothing

  pb::ClientHeartbeatRequest request;
  trace_.FillHeartbeat(&request);
  ASSERT_EQ(request.trace().processes_size(), 1);
  std::vector<std::tuple<trace::Stage, int64_t, int64_t>> spans;
  for (const pb::TraceSpan& span : request.trace().processes(0).spans()) {
    EXPECT_EQ(span.task().batch_index(), 5u);
    spans.emplace_back(static_cast<trace::Stage>(span.stage()), span.start_ns() - 3500,
                       span.end_ns() - 3500);
  }
  EXPECT_THAT(spans, ::testing::ElementsAre(std::tuple{trace::Stage::kBufferWait, 100, 300},
                                            std::tuple{trace::Stage::kHandoff, 300, 400},
                                            std::tuple{trace::Stage::kH2D, 450, 600},
                                            std::tuple{trace::Stage::kConsumerStep, 600, 900}));
}

TEST_F(ClientTraceTest, AnUnsampledBatchHasNoConsumerStages) {
  trace_.OnPopped(Task(5));  // off: nothing is sampled
  pb::ClientHeartbeatResponse response;
  response.mutable_trace()->set_sample_one_in(1);
  trace_.OnHeartbeatResponse(0, response);
  trace_.OnHandedOut(Task(5));  // never popped while sampled
  trace_.OnNextCalled();
  TurnOn();
  pb::ClientHeartbeatRequest request;
  trace_.FillHeartbeat(&request);
  EXPECT_FALSE(request.has_trace());
}

TEST_F(ClientTraceTest, HoldsSpansUntilTheCoordinatorsOffsetIsKnown) {
  pb::ClientHeartbeatResponse response;
  response.mutable_trace()->set_sample_one_in(1);
  trace_.OnHeartbeatResponse(0, response);  // on, but no hop-2 sample yet
  trace_.Record(trace::Stage::kHandoff, Task(1), 10, 20, "consumer");
  pb::ClientHeartbeatRequest request;
  trace_.FillHeartbeat(&request);
  EXPECT_FALSE(request.has_trace());
  Heartbeat(1000, 5000, 2000);  // one round trip is not enough to pin
  trace_.FillHeartbeat(&request);
  EXPECT_FALSE(request.has_trace());
  TurnOn();
  trace_.FillHeartbeat(&request);
  ASSERT_EQ(request.trace().processes_size(), 1);
  EXPECT_EQ(request.trace().processes(0).spans(0).end_ns(), 20 + 3500);
}

TEST_F(ClientTraceTest, DropsWorkerSpansOfAStreamWithoutAClockSample) {
  TurnOn();
  pb::BatchHeader header = WorkerHeader(2);
  header.mutable_trace()->clear_credit_client_ns();
  trace_.OnWorkerSpans(header, 1700);
  EXPECT_EQ(trace_.dropped(), 3u);
  pb::ClientHeartbeatRequest request;
  trace_.FillHeartbeat(&request);
  EXPECT_FALSE(request.has_trace());
}

TEST_F(ClientTraceTest, OffsetsStayPinnedForTheWindow) {
  TurnOn();
  trace_.OnWorkerSpans(WorkerHeader(4), 1700);
  pb::ClientHeartbeatRequest first;
  trace_.FillHeartbeat(&first);
  // A later, tighter sample of each hop with other offsets: spans still move by the first ones,
  // so one process's spans keep their order across heartbeats.
  Heartbeat(2990, 9000, 3000);
  pb::BatchHeader header = WorkerHeader(5);
  header.mutable_trace()->set_credit_client_ns(1690);
  trace_.OnWorkerSpans(header, 1700);
  trace_.Record(trace::Stage::kReceive, Task(5), 1700, 1800, "stream reader");
  pb::ClientHeartbeatRequest second;
  trace_.FillHeartbeat(&second);
  ASSERT_EQ(second.trace().processes_size(), 2);
  EXPECT_EQ(second.trace().processes(0).spans(0).start_ns(), 1700 + 3500);
  EXPECT_EQ(second.trace().processes(1).spans(0).start_ns(), 100 - 8950 + 3500);
}

TEST_F(ClientTraceTest, CoordinatorTurnsItOff) {
  TurnOn();
  trace_.OnHeartbeatResponse(0, pb::ClientHeartbeatResponse());
  EXPECT_FALSE(trace_.on());
  EXPECT_EQ(trace_.ClockIfOn(), 0);
}

TEST_F(ClientTraceTest, AFailedHeartbeatTurnsItOffKeepingWhatItHolds) {
  TurnOn();
  trace_.Record(trace::Stage::kHandoff, Task(1), 10, 20, "consumer");
  trace_.OnHeartbeatFailed();
  EXPECT_FALSE(trace_.on());
  pb::ClientHeartbeatRequest request;
  trace_.FillHeartbeat(&request);
  ASSERT_EQ(request.trace().processes_size(), 1);
}

}  // namespace
}  // namespace stoker
