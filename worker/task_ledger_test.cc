// The ledger of held tasks and reports: what is handed back, forgotten or reported delivered,
// and how reports are cut into heartbeats the coordinator accepts.

#include "worker/task_ledger.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "worker/fake_coordinator_for_test.h"
#include "worker/task_id_for_test.h"

namespace stoker {
namespace {

using worker_testing::TaskOf;

namespace pb = ::stoker::v1;
using ::testing::ElementsAre;
using worker_testing::RecordingSink;

google::protobuf::RepeatedPtrField<pb::Lease> Leases(uint64_t job_id,
                                                     const std::vector<uint64_t>& batches) {
  google::protobuf::RepeatedPtrField<pb::Lease> leases;
  for (uint64_t batch : batches) *leases.Add()->mutable_task() = TaskOf(job_id, 0, batch);
  return leases;
}

google::protobuf::RepeatedPtrField<pb::TaskId> Tasks(uint64_t job_id,
                                                     const std::vector<uint64_t>& batches) {
  google::protobuf::RepeatedPtrField<pb::TaskId> tasks;
  for (uint64_t batch : batches) *tasks.Add() = TaskOf(job_id, 0, batch);
  return tasks;
}

std::vector<uint64_t> Batches(const google::protobuf::RepeatedPtrField<pb::TaskId>& tasks) {
  std::vector<uint64_t> batches;
  for (const pb::TaskId& task : tasks) batches.push_back(task.batch_index());
  return batches;
}

class TaskLedgerTest : public ::testing::Test {
 protected:
  StreamSession NewSession() {
    return StreamSession(nullptr, 0, "c", &sink_, &pool_, [] {});
  }

  RecordingSink sink_;
  MessagePool pool_{2};
  int hand_back_calls_ = 0;
  TaskLedger ledger_{[this] { ++hand_back_calls_; }};
};

TEST_F(TaskLedgerTest, AnEndedStreamHandsBackOnlyItsUnacknowledgedTasks) {
  StreamSession a = NewSession();
  StreamSession b = NewSession();
  ledger_.Hold(a, Leases(5, {1, 2, 3}));
  ledger_.Hold(b, Leases(5, {4}));
  ledger_.Delivered(Tasks(5, {2}));
  EXPECT_EQ(ledger_.held(), 3u);
  EXPECT_FALSE(ledger_.reports_due());  // a delivered report waits for the interval

  a.Detach();
  EXPECT_EQ(ledger_.HandBack(&a), 2u);
  EXPECT_EQ(hand_back_calls_, 1);
  EXPECT_TRUE(ledger_.reports_due());  // hand-backs go at once
  EXPECT_EQ(ledger_.held(), 1u);       // b's
  pb::WorkerHeartbeatRequest request;
  ledger_.TakeReports(&request);
  EXPECT_THAT(Batches(request.returned()), testing::UnorderedElementsAre(1u, 3u));
  EXPECT_THAT(Batches(request.delivered()), ElementsAre(2u));
  EXPECT_FALSE(ledger_.reports_due());
}

TEST_F(TaskLedgerTest, LeasesForADetachedSessionAreHandedBack) {
  StreamSession session = NewSession();
  session.Detach();
  ledger_.Hold(session, Leases(5, {7, 8}));
  EXPECT_EQ(ledger_.held(), 0u);
  EXPECT_EQ(ledger_.to_hand_back(), 2u);
  EXPECT_EQ(hand_back_calls_, 1);
}

TEST_F(TaskLedgerTest, RevokedLeasesAndThoseOfRetiredJobsAreForgottenNotHandedBack) {
  StreamSession session = NewSession();
  ledger_.Hold(session, Leases(5, {1, 2}));
  ledger_.Hold(session, Leases(6, {1, 2}));
  pb::WorkerHeartbeatResponse response;
  *response.add_drop_leases() = TaskOf(5, 0, 1);
  response.add_retired_jobs(6);
  ledger_.OnHeartbeatAnswered(response);
  EXPECT_EQ(ledger_.held(), 1u);
  session.Detach();
  EXPECT_EQ(ledger_.HandBack(&session), 1u);  // only (5, 2)
}

TEST_F(TaskLedgerTest, ReportsGoInHeartbeatsOfBoundedSizeAndAFailedOneKeepsThem) {
  constexpr uint64_t kBigJob = uint64_t{1} << 50;  // ids as large as the coordinator mints
  std::vector<uint64_t> batches;
  for (uint64_t i = 0; i < 10000; ++i) batches.push_back(i);
  ledger_.Delivered(Tasks(kBigJob, batches));

  pb::WorkerHeartbeatRequest first;
  ledger_.TakeReports(&first);
  EXPECT_LE(first.ByteSizeLong(), TaskLedger::kHeartbeatBytes);
  EXPECT_GT(first.delivered_size(), 0);
  EXPECT_TRUE(ledger_.backlog());

  // Refused as too large: kept, and the next heartbeat carries half as many.
  ledger_.OnHeartbeatFailed(first, absl::ResourceExhaustedError("larger than max"));
  pb::WorkerHeartbeatRequest smaller;
  ledger_.TakeReports(&smaller);
  EXPECT_LE(smaller.ByteSizeLong(), first.ByteSizeLong() / 2);
  EXPECT_GT(smaller.delivered_size(), 0);

  // Answered: the budget doubles back; everything goes out exactly once.
  size_t reported = static_cast<size_t>(smaller.delivered_size());
  ledger_.OnHeartbeatAnswered(pb::WorkerHeartbeatResponse());
  for (int beats = 0; ledger_.backlog() && beats < 10000; ++beats) {
    pb::WorkerHeartbeatRequest next;
    ledger_.TakeReports(&next);
    EXPECT_LE(next.ByteSizeLong(), TaskLedger::kHeartbeatBytes);
    reported += static_cast<size_t>(next.delivered_size());
    ledger_.OnHeartbeatAnswered(pb::WorkerHeartbeatResponse());
  }
  EXPECT_EQ(reported, batches.size());
}

TEST_F(TaskLedgerTest, PastTheLimitTheOldestReportsAreDropped) {
  std::vector<uint64_t> batches;
  for (uint64_t i = 0; i < TaskLedger::kMaxPendingReports + 3; ++i) batches.push_back(i);
  ledger_.Delivered(Tasks(5, batches));
  size_t reported = 0;
  uint64_t lowest = UINT64_MAX;
  for (bool more = true; more;) {
    pb::WorkerHeartbeatRequest request;
    ledger_.TakeReports(&request);
    reported += static_cast<size_t>(request.delivered_size());
    for (const pb::TaskId& task : request.delivered())
      lowest = std::min(lowest, task.batch_index());
    more = ledger_.backlog();
  }
  EXPECT_EQ(reported, TaskLedger::kMaxPendingReports);
  EXPECT_EQ(lowest, 3u);
}

TEST_F(TaskLedgerTest, AwaitNoneHeldFollowsTheInjectedClock) {
  FakeClock clock;
  EXPECT_TRUE(ledger_.AwaitNoneHeld(&clock, clock.Now()));
  StreamSession session = NewSession();
  ledger_.Hold(session, Leases(5, {1}));
  EXPECT_FALSE(ledger_.AwaitNoneHeld(&clock, clock.Now()));  // the deadline has come
  ledger_.Delivered(Tasks(5, {1}));
  EXPECT_TRUE(ledger_.AwaitNoneHeld(&clock, clock.Now()));
}

}  // namespace
}  // namespace stoker
