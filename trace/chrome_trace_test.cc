#include "trace/chrome_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/status_matchers_for_test.h"
#include "trace/chrome_trace_validator.h"

namespace stoker::trace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

Span ThreadSpan(Stage stage, uint32_t thread_id, uint64_t batch, int64_t start_ns, int64_t end_ns,
                uint16_t name_id = 0) {
  Span span;
  span.stage = stage;
  span.thread_id = thread_id;
  span.task = TaskKey{1, 0, batch};
  span.start_ns = start_ns;
  span.end_ns = end_ns;
  span.name_id = name_id;
  return span;
}

// A coordinator, one worker with a producer thread and a sender thread, one rank: two batches.
std::vector<TraceProcess> TwoBatchesAcrossThreeProcesses() {
  TraceProcess coordinator{"coordinator", {}, {}, {{1, "rpc"}}, 0};
  coordinator.spans = {ThreadSpan(Stage::kLeaseGranted, 1, 0, 1'000, 1'000),
                       ThreadSpan(Stage::kLeaseGranted, 1, 1, 1'000, 1'000)};
  TraceProcess worker{"worker 10.0.0.5:7000",
                      {},
                      {"", "gaussian_blur"},
                      {{4, "producer 0"}, {5, "sender"}},
                      250'000};
  worker.spans = {
      ThreadSpan(Stage::kDecode, 4, 0, 2'000, 5'000), ThreadSpan(Stage::kOp, 4, 0, 5'000, 9'000, 1),
      ThreadSpan(Stage::kDecode, 4, 1, 9'000, 12'000),
      ThreadSpan(Stage::kOp, 4, 1, 12'000, 16'000, 1),
      // Both batches wait in the send queue at once: the second goes to a lane of its own.
      ThreadSpan(Stage::kQueue, 5, 0, 9'000, 17'000),
      ThreadSpan(Stage::kQueue, 5, 1, 16'000, 17'500),
      ThreadSpan(Stage::kSend, 5, 0, 17'000, 17'500),
      ThreadSpan(Stage::kSend, 5, 1, 17'500, 18'000)};
  TraceProcess rank{"rank 0", {}, {}, {{2, "reader"}, {3, "consumer"}}, 400'000};
  rank.spans = {ThreadSpan(Stage::kReceive, 2, 0, 17'600, 18'000),
                ThreadSpan(Stage::kReceive, 2, 1, 18'100, 18'400),
                ThreadSpan(Stage::kHandoff, 3, 0, 18'500, 18'600),
                ThreadSpan(Stage::kConsumerStep, 3, 0, 18'600, 30'000),
                ThreadSpan(Stage::kHandoff, 3, 1, 30'000, 30'100)};
  return {coordinator, worker, rank};
}

TEST(ChromeTraceTest, MergedTimelineValidatesWithOneProcessPerRole) {
  const std::string json = WriteChromeTrace(TwoBatchesAcrossThreeProcesses());
  const absl::StatusOr<ChromeTraceSummary> summary = ValidateChromeTrace(json);
  ASSERT_TRUE(summary.ok()) << summary.status() << "\n" << json;
  EXPECT_THAT(
      summary->process_names,
      ElementsAre(Pair(1, "coordinator"), Pair(2, "worker 10.0.0.5:7000"), Pair(3, "rank 0")));
  EXPECT_THAT(summary->complete_events, ElementsAre(Pair(2, 8), Pair(3, 5)));
  EXPECT_EQ(summary->instant_events, 2);
}

TEST(ChromeTraceTest, OverlappingWaitsGoToExtraLanesAndOpsAreNamed) {
  const std::string json = WriteChromeTrace(TwoBatchesAcrossThreeProcesses());
  // The second queue span overlaps the first: its own track, named after the thread.
  EXPECT_THAT(json, HasSubstr("\"args\":{\"name\":\"sender +1\"}"));
  EXPECT_THAT(json, HasSubstr("{\"name\":\"gaussian_blur\",\"cat\":\"op\",\"ph\":\"X\""));
  EXPECT_THAT(json, HasSubstr("\"clock_error_bound_us\":250.000"));
}

TEST(ChromeTraceTest, OneSpanIsWrittenExactly) {
  TraceProcess rank{"rank \"7\"", {ThreadSpan(Stage::kH2D, 9, 3, 5'000, 6'234)}, {}, {}, 1'500};
  EXPECT_EQ(WriteChromeTrace({rank}),
            "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
            "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":1,\"tid\":0,"
            "\"args\":{\"name\":\"rank \\\"7\\\"\",\"clock_error_bound_us\":1.500}},\n"
            "{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":1,\"tid\":1,"
            "\"args\":{\"name\":\"thread 9\"}},\n"
            "{\"name\":\"h2d\",\"cat\":\"h2d\",\"ph\":\"X\",\"dur\":1.234,\"ts\":0.000,\"pid\":1,"
            "\"tid\":1,\"args\":{\"job\":1,\"epoch\":0,\"batch\":3}}\n"
            "]}\n");
}

TEST(ChromeTraceTest, EmptyTraceIsValid) {
  const absl::StatusOr<ChromeTraceSummary> summary = ValidateChromeTrace(WriteChromeTrace({}));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->process_names.empty());
}

constexpr char kNamedPid[] =
    R"({"name":"process_name","ph":"M","ts":0,"pid":1,"tid":0,"args":{"name":"rank 0"}})";

std::string Trace(const std::string& events) {
  return std::string(R"({"traceEvents":[)") + kNamedPid + "," + events + "]}";
}

TEST(ValidateChromeTraceTest, RefusesWhatIsNotATraceEventDocument) {
  EXPECT_THAT(ValidateChromeTrace("[1, 2"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("trace: not a JSON object")));
  EXPECT_THAT(ValidateChromeTrace(R"({"events":[]})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no \"traceEvents\" array")));
  EXPECT_THAT(ValidateChromeTrace(R"({"traceEvents":[1]})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("traceEvents[0]: not an")));
}

TEST(ValidateChromeTraceTest, EveryEventNeedsNamePhTsPidTid) {
  EXPECT_THAT(ValidateChromeTrace(Trace(R"({"ph":"X","ts":0,"dur":1,"pid":1,"tid":1})")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("traceEvents[1]: no string \"name\"")));
  EXPECT_THAT(ValidateChromeTrace(Trace(R"({"name":"a","ts":0,"dur":1,"pid":1,"tid":1})")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no string \"ph\"")));
  EXPECT_THAT(ValidateChromeTrace(Trace(R"({"name":"a","ph":"X","ts":"0","pid":1,"tid":1})")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no numeric \"ts\"")));
  EXPECT_THAT(ValidateChromeTrace(Trace(R"({"name":"a","ph":"X","ts":0,"dur":1,"tid":1})")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no numeric \"pid\"")));
  EXPECT_THAT(ValidateChromeTrace(Trace(R"({"name":"a","ph":"i","ts":0,"pid":1})")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no numeric \"tid\"")));
}

TEST(ValidateChromeTraceTest, CompleteEventsNeedANonNegativeDuration) {
  EXPECT_THAT(ValidateChromeTrace(Trace(R"({"name":"a","ph":"X","ts":0,"pid":1,"tid":1})")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no numeric \"dur\"")));
  EXPECT_THAT(
      ValidateChromeTrace(Trace(R"({"name":"a","ph":"X","ts":5,"dur":-1,"pid":1,"tid":1})")),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("traceEvents[1]: \"dur\" -1")));
}

TEST(ValidateChromeTraceTest, SpansOfOneTrackMustNotOverlap) {
  const std::string a = R"({"name":"a","ph":"X","ts":1.000,"dur":2.000,"pid":1,"tid":1})";
  const std::string touching = R"({"name":"b","ph":"X","ts":3.000,"dur":1.000,"pid":1,"tid":1})";
  const std::string overlapping = R"({"name":"b","ph":"X","ts":2.999,"dur":1.000,"pid":1,"tid":1})";
  const std::string other_track = R"({"name":"b","ph":"X","ts":2.000,"dur":1.000,"pid":1,"tid":2})";
  EXPECT_TRUE(ValidateChromeTrace(Trace(a + "," + touching)).ok());
  EXPECT_TRUE(ValidateChromeTrace(Trace(a + "," + other_track)).ok());
  EXPECT_THAT(ValidateChromeTrace(Trace(a + "," + overlapping)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("traceEvents[2]: overlaps traceEvents[1]")));
}

TEST(ValidateChromeTraceTest, EveryProcessWithEventsIsNamed) {
  EXPECT_THAT(ValidateChromeTrace(Trace(R"({"name":"a","ph":"X","ts":0,"dur":1,"pid":2,"tid":1})")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("pid 2 has no process_name metadata event")));
}

TEST(MergeProcessTest, RenumbersNamesOfEachBatch) {
  // Two batch headers of one worker, each numbering its own names from 1.
  TraceProcess worker{"worker a:1", {}, {}, {}, 100};
  const TraceProcess first{
      "", {ThreadSpan(Stage::kOp, 4, 0, 0, 10, 1)}, {"", "resize"}, {{4, "p0"}}, 300};
  const TraceProcess second{
      "",
      {ThreadSpan(Stage::kOp, 4, 1, 10, 20, 1), ThreadSpan(Stage::kOp, 4, 1, 20, 30, 2)},
      {"", "flip", "resize"},
      {{4, "other"}},
      200};
  MergeProcess(first, &worker);
  MergeProcess(second, &worker);
  EXPECT_THAT(worker.op_names, ElementsAre("", "resize", "flip"));
  ASSERT_EQ(worker.spans.size(), 3u);
  EXPECT_EQ(worker.spans[0].name_id, 1);
  EXPECT_EQ(worker.spans[1].name_id, 2);
  EXPECT_EQ(worker.spans[2].name_id, 1);
  EXPECT_THAT(worker.thread_names, UnorderedElementsAre(Pair(4, "p0")));
  EXPECT_EQ(worker.clock_error_bound_ns, 300);
}

TEST(MergeProcessTest, NamesAreBoundedAndSpansOfDroppedNamesKeepTheStage) {
  TraceProcess into;
  TraceProcess from;
  from.op_names.emplace_back();
  for (size_t i = 0; i < kMaxNamesPerProcess + 5; ++i) {
    from.op_names.push_back("op" + std::to_string(i));
    from.thread_names[static_cast<uint32_t>(i)] = "t";
  }
  from.spans = {
      ThreadSpan(Stage::kOp, 1, 0, 0, 1, static_cast<uint16_t>(from.op_names.size() - 1))};
  MergeProcess(from, &into);
  EXPECT_EQ(into.op_names.size(), kMaxNamesPerProcess);
  EXPECT_EQ(into.thread_names.size(), kMaxNamesPerProcess);
  ASSERT_EQ(into.spans.size(), 1u);
  EXPECT_EQ(into.spans[0].name_id, 0);
}

}  // namespace
}  // namespace stoker::trace
