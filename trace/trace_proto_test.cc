#include "trace/trace_proto.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/status_matchers_for_test.h"

namespace stoker::trace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

namespace pb = ::stoker::v1;

Span NamedSpan(Stage stage, uint16_t name_id, uint32_t thread_id, int64_t start_ns,
               int64_t end_ns) {
  Span span;
  span.stage = stage;
  span.name_id = name_id;
  span.thread_id = thread_id;
  span.task = TaskKey{5, 1, 9};
  span.start_ns = start_ns;
  span.end_ns = end_ns;
  return span;
}

const std::vector<std::string> kRecorderNames = {"", "resize", "flip", "gaussian_blur x10"};

TEST(BatchTraceTest, CarriesOnlyTheNamesItsSpansUseAndNoTask) {
  const std::vector<Span> spans = {
      NamedSpan(Stage::kDecode, 0, 4, 100, 200), NamedSpan(Stage::kOpGroup, 3, 4, 200, 900),
      NamedSpan(Stage::kOp, 1, 4, 900, 950), NamedSpan(Stage::kSend, 0, 6, 1000, 1100)};
  const pb::BatchTrace trace =
      ToBatchTrace(spans, kRecorderNames, {{4, "producer 0"}, {5, "idle"}, {6, "sender"}});
  EXPECT_THAT(trace.op_names(), ElementsAre("gaussian_blur x10", "resize"));
  EXPECT_THAT(trace.thread_names(), UnorderedElementsAre(Pair(4, "producer 0"), Pair(6, "sender")));
  ASSERT_EQ(trace.spans_size(), 4);
  EXPECT_EQ(trace.spans(1).name_id(), 1u);
  EXPECT_EQ(trace.spans(2).name_id(), 2u);
  EXPECT_FALSE(trace.spans(0).has_task());
  EXPECT_TRUE(CheckBatchTrace(trace, "header.trace").ok());
}

TEST(BatchTraceTest, ComesBackAsTheHeadersTaskShiftedIntoTheReadersClock) {
  const std::vector<Span> spans = {NamedSpan(Stage::kDecode, 0, 4, 100, 200),
                                   NamedSpan(Stage::kOp, 2, 4, 200, 300)};
  pb::BatchTrace trace = ToBatchTrace(spans, kRecorderNames, {});
  trace.add_spans()->set_stage(99);  // a stage of a newer worker: skipped
  const TraceProcess process = FromBatchTrace(trace, TaskKey{5, 1, 9}, -50);
  EXPECT_THAT(process.spans, ElementsAre(NamedSpan(Stage::kDecode, 0, 4, 50, 150),
                                         NamedSpan(Stage::kOp, 1, 4, 150, 250)));
  EXPECT_THAT(process.op_names, ElementsAre("", "flip"));
}

TEST(BatchTraceTest, KeepsAtMostTheLimitOfSpans) {
  std::vector<Span> spans(kMaxSpansPerBatch + 10, NamedSpan(Stage::kDecode, 0, 1, 0, 1));
  EXPECT_EQ(ToBatchTrace(spans, kRecorderNames, {}).spans_size(), kMaxSpansPerBatch);
}

TEST(CheckBatchTraceTest, RefusesWhatAWorkerMustNotSend) {
  pb::BatchTrace too_many;
  for (int i = 0; i <= kMaxSpansPerBatch; ++i) too_many.add_spans();
  EXPECT_THAT(CheckBatchTrace(too_many, "header.trace"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("header.trace.spans: 65 entries, over the limit of 64")));
  pb::BatchTrace backwards;
  backwards.add_spans()->set_start_ns(10);
  EXPECT_THAT(CheckBatchTrace(backwards, "header.trace"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("header.trace.spans[0]: end_ns 0 is before start_ns 10")));
  pb::BatchTrace unnamed;
  unnamed.add_spans()->set_name_id(1);
  EXPECT_THAT(CheckBatchTrace(unnamed, "header.trace"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spans[0]: name_id 1 names no op_names entry")));
  pb::BatchTrace long_name;
  long_name.add_op_names(std::string(kMaxNameBytes + 1, 'x'));
  EXPECT_THAT(CheckBatchTrace(long_name, "header.trace"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("header.trace.op_names[0]: 65 bytes")));
  pb::BatchTrace many_threads;
  for (uint32_t i = 0; i <= kMaxNamesPerMessage; ++i) (*many_threads.mutable_thread_names())[i];
  EXPECT_THAT(
      CheckBatchTrace(many_threads, "header.trace"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("header.trace.thread_names:")));
}

TEST(CheckTraceSpansTest, BoundsProcessesSpansAndBounds) {
  pb::TraceSpans spans;
  for (int i = 0; i < 2; ++i) {
    pb::TraceProcessSpans* process = spans.add_processes();
    for (int j = 0; j < kMaxSpansPerHeartbeat / 2; ++j) process->add_spans();
  }
  EXPECT_TRUE(CheckTraceSpans(spans, "trace").ok());
  spans.mutable_processes(1)->add_spans();
  EXPECT_THAT(
      CheckTraceSpans(spans, "trace"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("trace.processes[*].spans: 4097 entries, over the limit of 4096")));
  pb::TraceSpans processes;
  for (int i = 0; i <= kMaxProcessesPerHeartbeat; ++i) processes.add_processes();
  EXPECT_THAT(CheckTraceSpans(processes, "trace"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("trace.processes: 65")));
  pb::TraceSpans negative;
  negative.add_processes();
  negative.add_processes()->set_clock_error_bound_ns(-1);
  EXPECT_THAT(CheckTraceSpans(negative, "trace"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("trace.processes[1].clock_error_bound_ns: -1")));
}

TEST(CheckTraceRequestsTest, SecondsAndPageSizeAreBounded) {
  pb::StartTraceRequest start;
  EXPECT_THAT(CheckStartTraceRequest(start, 600),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("seconds: 0, not in [1, 600] (--max-trace-seconds)")));
  start.set_seconds(601);
  EXPECT_THAT(CheckStartTraceRequest(start, 600),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("seconds: 601")));
  start.set_seconds(600);
  EXPECT_TRUE(CheckStartTraceRequest(start, 600).ok());
  pb::GetTraceRequest get;
  EXPECT_TRUE(CheckGetTraceRequest(get).ok());
  get.set_max_spans(kMaxSpansPerPage + 1);
  EXPECT_THAT(CheckGetTraceRequest(get),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_spans: 65537")));
}

TEST(ProcessSpansTest, RoundTripsAProcess) {
  TraceProcess process;
  process.name = "rank 2";
  process.op_names = {"", "normalize"};
  process.thread_names = {{3, "consumer"}};
  process.spans = {NamedSpan(Stage::kHandoff, 0, 3, 10, 20), NamedSpan(Stage::kOp, 1, 3, 20, 30)};
  process.clock_error_bound_ns = 700;
  const pb::TraceProcessSpans message = ToProcessSpans(process);
  pb::TraceSpans heartbeat;
  *heartbeat.add_processes() = message;
  ASSERT_TRUE(CheckTraceSpans(heartbeat, "trace").ok());
  const TraceProcess back = FromProcessSpans(message);
  EXPECT_EQ(back.name, "rank 2");
  EXPECT_EQ(back.op_names, process.op_names);
  EXPECT_EQ(back.thread_names, process.thread_names);
  EXPECT_EQ(back.spans, process.spans);
  EXPECT_EQ(back.clock_error_bound_ns, 700);
}

}  // namespace
}  // namespace stoker::trace
