#include "trace/trace_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/status_matchers_for_test.h"
#include "trace/chrome_trace_validator.h"
#include "trace/span_for_test.h"

namespace stoker::trace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr int64_t kSecond = 1'000'000'000;

TraceStore::Options SmallOptions() {
  TraceStore::Options options;
  options.max_jobs = 2;
  options.max_spans_per_job = 5;
  options.max_processes_per_job = 3;
  options.grace_ns = 2 * kSecond;
  return options;
}

TraceProcess Process(std::string name, std::vector<Span> spans,
                     std::vector<std::string> op_names = {}) {
  TraceProcess process;
  process.name = std::move(name);
  process.spans = std::move(spans);
  process.op_names = std::move(op_names);
  return process;
}

TEST(TraceStoreTest, WindowOpensForItsDurationAndSamplingDefaultsToEveryTask) {
  TraceStore store(SmallOptions());
  EXPECT_EQ(store.WindowAt(7, 0), std::nullopt);
  const absl::StatusOr<int64_t> until = store.Start(7, 1 * kSecond, 10 * kSecond, 4);
  ASSERT_TRUE(until.ok()) << until.status();
  EXPECT_EQ(*until, 11 * kSecond);
  const std::optional<TraceStore::Window> window = store.WindowAt(7, 4 * kSecond);
  ASSERT_TRUE(window.has_value());
  EXPECT_EQ(window->sample_one_in, 4u);
  EXPECT_EQ(window->remaining_ns, 7 * kSecond);
  EXPECT_EQ(store.WindowAt(7, 11 * kSecond), std::nullopt);
  ASSERT_TRUE(store.Start(7, 20 * kSecond, kSecond, 0).ok());
  EXPECT_EQ(store.WindowAt(7, 20 * kSecond)->sample_one_in, 1u);
}

TEST(TraceStoreTest, SpansAreTakenUntilTheGraceAfterTheWindowEnds) {
  TraceStore store(SmallOptions());
  store.Add(7, 0, Process("rank 0", {BatchSpan(Stage::kReceive, 0, 0, 1)}));  // no window yet
  ASSERT_TRUE(store.Start(7, 0, 10 * kSecond, 1).ok());
  store.Add(7, 5 * kSecond, Process("rank 0", {BatchSpan(Stage::kReceive, 1, 0, 1)}));
  store.Add(7, 11 * kSecond, Process("rank 0", {BatchSpan(Stage::kReceive, 2, 0, 1)}));  // grace
  store.Add(7, 12 * kSecond, Process("rank 0", {BatchSpan(Stage::kReceive, 3, 0, 1)}));  // late
  const absl::StatusOr<TraceStore::Page> page = store.Read(7, 0, 100, 12 * kSecond);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->processes.size(), 1u);
  EXPECT_EQ(page->processes[0].spans, (std::vector<Span>{BatchSpan(Stage::kReceive, 1, 0, 1),
                                                         BatchSpan(Stage::kReceive, 2, 0, 1)}));
  EXPECT_FALSE(page->tracing);
  EXPECT_EQ(page->next_token, 0u);
}

TEST(TraceStoreTest, PagesFollowArrivalWithEachProcessesNames) {
  TraceStore store(SmallOptions());
  ASSERT_TRUE(store.Start(7, 0, 10 * kSecond, 1).ok());
  store.Add(7, 1, Process("worker a:1", {BatchSpan(Stage::kOp, 0, 0, 5, 1)}, {"", "resize"}));
  store.Add(7, 2, Process("rank 0", {BatchSpan(Stage::kReceive, 0, 6, 7)}));
  // The same worker again, its batch numbering names its own way.
  store.Add(
      7, 3,
      Process("worker a:1", {BatchSpan(Stage::kOp, 1, 8, 9, 2), BatchSpan(Stage::kOp, 1, 9, 10, 1)},
              {"", "flip", "resize"}));
  const absl::StatusOr<TraceStore::Page> first = store.Read(7, 0, 2, 4);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->processes.size(), 2u);
  EXPECT_EQ(first->processes[0].name, "worker a:1");
  EXPECT_EQ(first->processes[1].name, "rank 0");
  EXPECT_TRUE(first->tracing);
  const absl::StatusOr<TraceStore::Page> second = store.Read(7, first->next_token, 2, 4);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->processes.size(), 1u);
  // Renumbered into the worker's table: resize stays 1, flip becomes 2.
  EXPECT_THAT(second->processes[0].op_names, ElementsAre("", "resize", "flip"));
  EXPECT_EQ(second->processes[0].spans, (std::vector<Span>{BatchSpan(Stage::kOp, 1, 8, 9, 1),
                                                           BatchSpan(Stage::kOp, 1, 9, 10, 2)}));
  // At the end while the window is open: a token to poll again, with nothing new yet.
  const absl::StatusOr<TraceStore::Page> third = store.Read(7, second->next_token, 2, 4);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_TRUE(third->processes.empty());
  EXPECT_EQ(third->next_token, second->next_token);
  // Once closed, the same read is the last page.
  EXPECT_EQ(store.Read(7, second->next_token, 2, 13 * kSecond)->next_token, 0u);
}

TEST(TraceStoreTest, ReadsOfUnknownJobsAndBadTokensAreRefused) {
  TraceStore store(SmallOptions());
  EXPECT_THAT(store.Read(9, 0, 10, 0),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("job_id: job 9 has no trace")));
  ASSERT_TRUE(store.Start(9, 0, kSecond, 1).ok());
  EXPECT_THAT(store.Read(9, 2, 10, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("page_token: 2 is past")));
  store.Forget(9);
  EXPECT_THAT(store.Read(9, 0, 10, 0), StatusIs(absl::StatusCode::kNotFound, HasSubstr("job 9")));
}

TEST(TraceStoreTest, SpansProcessesAndJobsAreBounded) {
  TraceStore store(SmallOptions());
  ASSERT_TRUE(store.Start(7, 0, 10 * kSecond, 1).ok());
  store.Add(7, 1,
            Process("p1", {BatchSpan(Stage::kSend, 0, 0, 1), BatchSpan(Stage::kSend, 1, 1, 2)}));
  store.Add(7, 1, Process("p2", {BatchSpan(Stage::kSend, 2, 0, 1)}));
  store.Add(7, 1, Process("p3", {BatchSpan(Stage::kSend, 3, 0, 1)}));
  store.Add(7, 1, Process("p4", {BatchSpan(Stage::kSend, 4, 0, 1)}));  // a fourth process
  store.Add(7, 1,
            Process("p1", {BatchSpan(Stage::kSend, 5, 0, 1), BatchSpan(Stage::kSend, 6, 1, 2)}));
  const absl::StatusOr<TraceStore::Page> page = store.Read(7, 0, 100, 2);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->processes.size(), 3u);
  EXPECT_EQ(page->dropped_spans, 2u);  // p4's span and the sixth span
  size_t kept = 0;
  for (const TraceProcess& process : page->processes) kept += process.spans.size();
  EXPECT_EQ(kept, 5u);

  ASSERT_TRUE(store.Start(8, 0, kSecond, 1).ok());
  EXPECT_THAT(store.Start(9, 0, kSecond, 1),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("the limit is 2")));
  EXPECT_TRUE(store.Start(7, 0, kSecond, 1).ok());  // a traced job may extend its window
  store.Forget(8);
  EXPECT_TRUE(store.Start(9, 0, kSecond, 1).ok());
}

TEST(TraceStoreTest, ThreeRolesReadBackMakeAValidTimeline) {
  TraceStore store(TraceStore::Options{});
  ASSERT_TRUE(store.Start(7, 0, 10 * kSecond, 1).ok());
  store.Add(7, 1, Process("coordinator", {BatchSpan(Stage::kLeaseGranted, 0, 100, 100)}));
  store.Add(7, 1,
            Process("worker a:1",
                    {BatchSpan(Stage::kDecode, 0, 200, 300), BatchSpan(Stage::kQueue, 0, 300, 900),
                     BatchSpan(Stage::kSend, 0, 900, 950)}));
  store.Add(7, 1,
            Process("rank 0", {BatchSpan(Stage::kReceive, 0, 960, 990),
                               BatchSpan(Stage::kBufferWait, 0, 990, 1200),
                               BatchSpan(Stage::kHandoff, 0, 1200, 1250)}));
  std::vector<TraceProcess> processes;
  // After the window and its grace (default 5 s): the last page ends the loop; 10 pages bound it.
  uint64_t token = 0;
  for (int pages = 0; pages < 10; ++pages) {
    const absl::StatusOr<TraceStore::Page> page = store.Read(7, token, 2, 16 * kSecond);
    ASSERT_TRUE(page.ok()) << page.status();
    for (const TraceProcess& piece : page->processes) {
      auto it = std::find_if(processes.begin(), processes.end(),
                             [&](const TraceProcess& p) { return p.name == piece.name; });
      if (it == processes.end()) {
        processes.push_back(piece);
      } else {
        MergeProcess(piece, &*it);
      }
    }
    token = page->next_token;
    if (token == 0) break;
  }
  ASSERT_EQ(token, 0u);
  const absl::StatusOr<ChromeTraceSummary> summary =
      ValidateChromeTrace(WriteChromeTrace(processes));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_THAT(summary->process_names,
              ElementsAre(Pair(1, "coordinator"), Pair(2, "worker a:1"), Pair(3, "rank 0")));
  EXPECT_THAT(summary->complete_events, ElementsAre(Pair(2, 3), Pair(3, 3)));
  EXPECT_EQ(summary->instant_events, 1);
}

}  // namespace
}  // namespace stoker::trace
