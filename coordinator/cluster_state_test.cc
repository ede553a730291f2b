#include "coordinator/cluster_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "coordinator/state_updates_for_test.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using ClusterStateTest = ClusterStateFixture;

TEST_F(ClusterStateTest, CreateJobStoresSpecAndGeometry) {
  const JobRecord* job = state_.FindJob(kJob);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->name, "job");
  EXPECT_EQ(job->geometry.num_samples, 40u);
  EXPECT_EQ(job->geometry.batches_per_rank, 5u);
  EXPECT_EQ(job->geometry.batch_bytes, 4u * 8 * 8 * 3 * sizeof(float));
  EXPECT_THAT(job->geometry.batch_shape, ElementsAre(4, 8, 8, 3));
  EXPECT_EQ(state_.FindJobByName("default", "job"), job);
  EXPECT_EQ(state_.FindJobByName("default", "other"), nullptr);
  EXPECT_EQ(state_.next_job_id(), 2u);
  EXPECT_EQ(state_.num_jobs(), 1u);
}

TEST_F(ClusterStateTest, CreateJobErrors) {
  EXPECT_THAT(state_.Apply(CreateJob(0, "x", SmallJobSpec())),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("job_id")));
  EXPECT_THAT(state_.Apply(CreateJob(5, "", SmallJobSpec())),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("name")));
  EXPECT_THAT(state_.Apply(CreateJob(kJob, "x", SmallJobSpec())),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("job id 1")));
  EXPECT_THAT(state_.Apply(CreateJob(5, "job", SmallJobSpec())),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("'job'")));
  stoker::v1::JobSpec bad = SmallJobSpec();
  bad.set_batch_size(0);
  EXPECT_THAT(state_.Apply(CreateJob(5, "x", bad)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.batch_size")));
  EXPECT_EQ(state_.num_jobs(), 1u);
}

TEST_F(ClusterStateTest, CreateJobTakesItsGeometryFromTheUpdateAndOpensNothing) {
  stoker::v1::JobSpec gone = SmallJobSpec();
  gone.mutable_dataset()->mutable_shards()->set_manifest("/nonexistent/manifest.json");
  StateUpdate update = CreateJob(5, "gone", SmallJobSpec());
  *update.mutable_create_job()->mutable_spec() = gone;  // geometry of the synthetic twin
  ASSERT_THAT(state_.Apply(update), IsOk());
  EXPECT_EQ(state_.FindJob(5)->geometry.batches_per_rank, 5u);

  update.mutable_create_job()->set_job_id(6);
  update.mutable_create_job()->set_name("no-geometry");
  update.mutable_create_job()->clear_geometry();  // a format-1 record not upgraded
  EXPECT_THAT(state_.Apply(update), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("create_job.geometry.num_samples")));
  update = CreateJob(6, "inconsistent", SmallJobSpec());
  update.mutable_create_job()->mutable_geometry()->set_batches_per_rank(6);
  EXPECT_THAT(state_.Apply(update), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("create_job.geometry.batches_per_rank")));
  update = CreateJob(6, "bad-shape", SmallJobSpec());
  update.mutable_create_job()->mutable_geometry()->set_batch_shape(0, 3);
  EXPECT_THAT(state_.Apply(update), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("create_job.geometry.batch_shape")));
  EXPECT_EQ(state_.num_jobs(), 2u);
}

TEST_F(ClusterStateTest, RetireJobForgetsItsProgressLeasesAndName) {
  ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 0), Task(0, 2)}, 100)), IsOk());
  StateUpdate retire;
  retire.mutable_retire_job()->set_job_id(kJob);
  ASSERT_THAT(state_.Apply(retire), IsOk());
  EXPECT_EQ(state_.FindJob(kJob), nullptr);
  EXPECT_EQ(state_.FindJobByName("default", "job"), nullptr);
  EXPECT_THAT(state_.LeasesOf(kWorkerA), IsEmpty());
  EXPECT_FALSE(state_.EarliestLeaseExpiry().has_value());
  EXPECT_THAT(state_.Apply(retire), StatusIs(absl::StatusCode::kNotFound, HasSubstr("retire_job")));
  ASSERT_THAT(state_.Apply(Remove(kWorkerA)), IsOk());  // no stale index entry to trip on
  ASSERT_THAT(state_.Apply(CreateJob(kJob + 1, "job", SmallJobSpec())), IsOk());  // name free
  EXPECT_EQ(state_.MakeSnapshot().jobs_size(), 1);
}

// The fixture's job is the default tenant's; the usage follows create_job, retire_job and
// restore, so a replayed journal or a snapshot gives the counts the quotas need.
TEST_F(ClusterStateTest, TenantUsageFollowsCreateRetireAndRestore) {
  StateUpdate of_a = CreateJob(kJob + 1, "a1", SmallJobSpec(2));
  of_a.mutable_create_job()->set_tenant("a");
  ASSERT_THAT(state_.Apply(of_a), IsOk());
  of_a = CreateJob(kJob + 2, "a2", SmallJobSpec(3));
  of_a.mutable_create_job()->set_tenant("a");
  ASSERT_THAT(state_.Apply(of_a), IsOk());
  EXPECT_EQ(state_.UsageOf("a").jobs, 2u);
  EXPECT_EQ(state_.UsageOf("a").ranks, 5u);
  EXPECT_EQ(state_.UsageOf("default").jobs, 1u);
  EXPECT_EQ(state_.UsageOf("b").jobs, 0u);
  StateUpdate retire;
  retire.mutable_retire_job()->set_job_id(kJob + 1);
  ASSERT_THAT(state_.Apply(retire), IsOk());
  EXPECT_EQ(state_.UsageOf("a").ranks, 3u);
  StateUpdate restore;
  *restore.mutable_restore() = state_.MakeSnapshot();
  ClusterState restored;
  ASSERT_THAT(restored.Apply(restore), IsOk());
  EXPECT_EQ(restored.tenant_usage().size(), 2u);
  EXPECT_EQ(restored.UsageOf("a").jobs, 1u);
  EXPECT_EQ(restored.UsageOf("a").ranks, 3u);
  retire.mutable_retire_job()->set_job_id(kJob + 2);
  ASSERT_THAT(restored.Apply(retire), IsOk());
  EXPECT_EQ(restored.tenant_usage().count("a"), 0u);  // a tenant with nothing open is not kept
}

TEST_F(ClusterStateTest, EmptyUpdateIsInvalid) {
  EXPECT_THAT(state_.Apply(StateUpdate()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no update")));
}

TEST_F(ClusterStateTest, RegisterWorkerAndErrors) {
  ASSERT_THAT(state_.Apply(Register(7, "c:1", 4, 1000)), IsOk());
  const WorkerRecord* worker = state_.FindWorker(7);
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(worker->address, "c:1");
  EXPECT_EQ(worker->cores, 4u);
  EXPECT_EQ(worker->last_heartbeat_unix_ms, 1000);
  EXPECT_EQ(state_.FindWorkerByAddress("c:1"), worker);
  EXPECT_EQ(state_.next_worker_id(), 8u);
  EXPECT_EQ(state_.Workers().size(), 3u);

  EXPECT_THAT(state_.Apply(Register(0, "d:1")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("worker_id")));
  EXPECT_THAT(state_.Apply(Register(9, "")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("address")));
  EXPECT_THAT(state_.Apply(Register(9, "d:1", 0)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cores")));
  EXPECT_THAT(state_.Apply(Register(7, "d:1")),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("worker id 7")));
}

TEST_F(ClusterStateTest, WorkerHeartbeatUpdatesLiveness) {
  ASSERT_THAT(state_.Apply(Heartbeat(kWorkerA, 5000)), IsOk());
  EXPECT_EQ(state_.FindWorker(kWorkerA)->last_heartbeat_unix_ms, 5000);
  EXPECT_THAT(state_.WorkersSilentSince(1000), ElementsAre(kWorkerB));
  EXPECT_THAT(state_.Apply(Heartbeat(42, 5000)),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("worker 42")));
}

// WorkersSilentSince reads an index by last heartbeat: it follows heartbeats (never back in
// time), removals and restores, and lists ids in order.
TEST_F(ClusterStateTest, SilentWorkersFollowHeartbeatsRemovalsAndRestores) {
  ASSERT_THAT(state_.Apply(Register(9, "c:1", 1, 3000)), IsOk());
  ASSERT_THAT(state_.Apply(Heartbeat(kWorkerB, 4000)), IsOk());
  ASSERT_THAT(state_.Apply(Heartbeat(kWorkerB, 2000)), IsOk());  // late: keeps 4000
  EXPECT_EQ(state_.FindWorker(kWorkerB)->last_heartbeat_unix_ms, 4000);
  EXPECT_THAT(state_.WorkersSilentSince(3500), ElementsAre(kWorkerA, 9));
  EXPECT_THAT(state_.WorkersSilentSince(4001), ElementsAre(kWorkerA, kWorkerB, 9));
  ASSERT_THAT(state_.Apply(Remove(kWorkerA)), IsOk());
  EXPECT_THAT(state_.WorkersSilentSince(3500), ElementsAre(9));
  StateUpdate restore;
  *restore.mutable_restore() = state_.MakeSnapshot();
  ClusterState copy;
  ASSERT_THAT(copy.Apply(restore), IsOk());
  EXPECT_THAT(copy.WorkersSilentSince(3500), ElementsAre(9));
  EXPECT_THAT(copy.WorkersSilentSince(4001), ElementsAre(kWorkerB, 9));
  EXPECT_THAT(copy.WorkersSilentSince(3000), IsEmpty());
}

TEST_F(ClusterStateTest, PendingTasksFollowPlanOrderOfTheRank) {
  // Rank 1 of 2: global batches 1, 3, 5, 7, 9 of epoch 0, then of epoch 1.
  EXPECT_THAT(Pairs(state_.PendingTasks(kJob, 1, 7)),
              ElementsAre(P{0, 1}, P{0, 3}, P{0, 5}, P{0, 7}, P{0, 9}, P{1, 1}, P{1, 3}));
  EXPECT_THAT(state_.PendingTasks(kJob, 2, 7), IsEmpty());  // rank outside world size
  EXPECT_THAT(state_.PendingTasks(99, 0, 7), IsEmpty());    // unknown job
}

TEST_F(ClusterStateTest, LeaseTasksTakesTasksInOrder) {
  ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 0), Task(0, 2)}, 100)), IsOk());
  EXPECT_THAT(Pairs(state_.LeasesOf(kWorkerA)), ElementsAre(P{0, 0}, P{0, 2}));
  EXPECT_THAT(Pairs(state_.PendingTasks(kJob, 0, 2)), ElementsAre(P{0, 4}, P{0, 6}));
  EXPECT_EQ(state_.EarliestLeaseExpiry(), 100);
  const RankProgressSummary summary = state_.RankSummary(kJob, 0);
  EXPECT_EQ(summary.total, 10u);
  EXPECT_EQ(summary.next_unleased, 2u);
  EXPECT_EQ(summary.leased, 2u);
  // Only rank 0 has progress; rank 1 (all pending) is not walked.
  const auto progressed = state_.ProgressedRankSummaries(kJob);
  ASSERT_EQ(progressed.size(), 1u);
  EXPECT_EQ(progressed[0].first, 0u);
  EXPECT_EQ(progressed[0].second.leased, 2u);
}

TEST_F(ClusterStateTest, LeaseTasksErrorsLeaveStateUnchanged) {
  ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 0)}, 100)), IsOk());
  EXPECT_THAT(state_.Apply(Lease(kWorkerB, {Task(0, 0)}, 100)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("leased to worker 1")));
  EXPECT_THAT(state_.Apply(Lease(kWorkerB, {Task(0, 2), Task(0, 6)}, 100)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("job 1 epoch 0 batch 6 is not the next pending task")));
  EXPECT_THAT(state_.Apply(Lease(kWorkerB, {Task(0, 2), Task(0, 2)}, 100)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("listed twice")));
  EXPECT_THAT(state_.Apply(Lease(kWorkerB, {Task(2, 0)}, 100)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("2 epochs")));
  EXPECT_THAT(state_.Apply(Lease(kWorkerB, {Task(0, 10)}, 100)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("10 batches")));
  EXPECT_THAT(state_.Apply(Lease(kWorkerB, {Task(0, 0, 9)}, 100)),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no such job")));
  EXPECT_THAT(state_.Apply(Lease(42, {Task(0, 2)}, 100)),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("worker 42")));
  EXPECT_THAT(state_.LeasesOf(kWorkerB), IsEmpty());
  EXPECT_EQ(state_.RankSummary(kJob, 0).next_unleased, 1u);
}

TEST_F(ClusterStateTest, CompleteOutOfOrderCompactsAtTheWatermark) {
  ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 0), Task(0, 2), Task(0, 4)}, 100)), IsOk());
  ASSERT_THAT(state_.Apply(Complete({Task(0, 2), Task(0, 4)})), IsOk());
  RankProgressSummary summary = state_.RankSummary(kJob, 0);
  EXPECT_EQ(summary.done_watermark, 0u);
  EXPECT_EQ(summary.done_above_watermark, 2u);
  EXPECT_EQ(summary.leased, 1u);

  ASSERT_THAT(state_.Apply(Complete({Task(0, 0)})), IsOk());
  summary = state_.RankSummary(kJob, 0);
  EXPECT_EQ(summary.done_watermark, 3u);
  EXPECT_EQ(summary.done_above_watermark, 0u);
  EXPECT_EQ(summary.leased, 0u);
  EXPECT_EQ(state_.EarliestLeaseExpiry(), std::nullopt);

  // Completing again is harmless.
  ASSERT_THAT(state_.Apply(Complete({Task(0, 0), Task(0, 2)})), IsOk());
  EXPECT_EQ(state_.RankSummary(kJob, 0).done_watermark, 3u);
}

TEST_F(ClusterStateTest, CompletingAnUnleasedTaskSkipsItWhenLeasing) {
  // E.g. a batch leased before a coordinator restart, reported after it.
  ASSERT_THAT(state_.Apply(Complete({Task(0, 2)})), IsOk());
  EXPECT_THAT(Pairs(state_.PendingTasks(kJob, 0, 3)), ElementsAre(P{0, 0}, P{0, 4}, P{0, 6}));
  ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 0), Task(0, 4)}, 100)), IsOk());
  EXPECT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 2)}, 100)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("is done")));
}

TEST_F(ClusterStateTest, CompleteErrorsApplyNothing) {
  EXPECT_THAT(state_.Apply(Complete({Task(0, 0), Task(5, 0)})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("epoch 5")));
  EXPECT_THAT(state_.Apply(Complete({Task(0, 0, 9)})),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("job 9")));
  EXPECT_EQ(state_.RankSummary(kJob, 0).done_watermark, 0u);
}

TEST_F(ClusterStateTest, RemoveWorkerRequeuesItsLeasesFirstInLine) {
  ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 0), Task(0, 2)}, 100)), IsOk());
  ASSERT_THAT(state_.Apply(Lease(kWorkerB, {Task(0, 4)}, 100)), IsOk());
  ASSERT_THAT(state_.Apply(Remove(kWorkerA)), IsOk());
  EXPECT_EQ(state_.FindWorker(kWorkerA), nullptr);
  EXPECT_EQ(state_.RankSummary(kJob, 0).requeued, 2u);
  EXPECT_THAT(Pairs(state_.PendingTasks(kJob, 0, 3)), ElementsAre(P{0, 0}, P{0, 2}, P{0, 6}));
  ASSERT_THAT(state_.Apply(Lease(kWorkerB, {Task(0, 2), Task(0, 0), Task(0, 6)}, 200)), IsOk());
  EXPECT_THAT(Pairs(state_.LeasesOf(kWorkerB)), ElementsAre(P{0, 0}, P{0, 2}, P{0, 4}, P{0, 6}));
  EXPECT_THAT(state_.Apply(Remove(kWorkerA)),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("worker 1")));
}

TEST_F(ClusterStateTest, CompletingARequeuedTaskRemovesIt) {
  ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 0), Task(0, 2)}, 100)), IsOk());
  ASSERT_THAT(state_.Apply(Remove(kWorkerA)), IsOk());
  ASSERT_THAT(state_.Apply(Complete({Task(0, 0)})), IsOk());
  EXPECT_EQ(state_.RankSummary(kJob, 0).requeued, 1u);
  EXPECT_THAT(Pairs(state_.PendingTasks(kJob, 0, 2)), ElementsAre(P{0, 2}, P{0, 4}));
}

TEST_F(ClusterStateTest, ExpireLeasesRequeuesAndRevokes) {
  ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 0), Task(0, 2)}, 100)), IsOk());
  ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 1)}, 300)), IsOk());
  ASSERT_THAT(state_.Apply(Expire(99)), IsOk());
  EXPECT_EQ(state_.RankSummary(kJob, 0).leased, 2u);
  ASSERT_THAT(state_.Apply(Expire(100)), IsOk());  // at or before: expired
  EXPECT_EQ(state_.RankSummary(kJob, 0).requeued, 2u);
  EXPECT_THAT(Pairs(state_.LeasesOf(kWorkerA)), ElementsAre(P{0, 1}));
  EXPECT_EQ(state_.EarliestLeaseExpiry(), 300);
  EXPECT_THAT(Pairs(state_.RevokedLeases(kWorkerA)), ElementsAre(P{0, 0}, P{0, 2}));

  // Worker B takes one of them and the other is done: A must still drop the first, not the
  // second. A's heartbeat forgets them (the coordinator has reported them by then).
  ASSERT_THAT(state_.Apply(Lease(kWorkerB, {Task(0, 0)}, 400)), IsOk());
  ASSERT_THAT(state_.Apply(Complete({Task(0, 2)})), IsOk());
  EXPECT_THAT(Pairs(state_.RevokedLeases(kWorkerA)), ElementsAre(P{0, 0}));
  ASSERT_THAT(state_.Apply(Heartbeat(kWorkerA, 150)), IsOk());
  EXPECT_THAT(state_.RevokedLeases(kWorkerA), IsEmpty());
}

TEST_F(ClusterStateTest, RevokedTaskLeasedAgainToTheSameWorkerIsNotDropped) {
  ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 0)}, 100)), IsOk());
  ASSERT_THAT(state_.Apply(Expire(100)), IsOk());
  ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 0)}, 200)), IsOk());
  EXPECT_THAT(state_.RevokedLeases(kWorkerA), IsEmpty());
}

TEST_F(ClusterStateTest, RankAndJobFinishWhenEverythingIsDone) {
  for (uint32_t rank = 0; rank < 2; ++rank) {
    EXPECT_FALSE(state_.RankFinished(kJob, rank));
    std::vector<TaskId> tasks = state_.PendingTasks(kJob, rank, 100);
    ASSERT_EQ(tasks.size(), 10u);
    ASSERT_THAT(state_.Apply(Lease(kWorkerA, tasks, 100)), IsOk());
    EXPECT_THAT(state_.PendingTasks(kJob, rank, 100), IsEmpty());
    EXPECT_FALSE(state_.RankFinished(kJob, rank));
    // Complete in reverse: the done set holds them until the first arrives.
    std::vector<TaskId> reversed(tasks.rbegin(), tasks.rend());
    ASSERT_THAT(state_.Apply(Complete(reversed)), IsOk());
    EXPECT_TRUE(state_.RankFinished(kJob, rank));
    EXPECT_EQ(state_.RankSummary(kJob, rank).done_above_watermark, 0u);
    EXPECT_EQ(state_.JobFinished(kJob), rank == 1);
  }
  ASSERT_THAT(state_.Apply(Complete({Task(1, 9)})), IsOk());
  EXPECT_TRUE(state_.JobFinished(kJob));
}

TEST_F(ClusterStateTest, ReturnLeasesRequeuesOnlyTheHoldersTasks) {
  ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 0), Task(0, 2)}, 100)), IsOk());
  StateUpdate foreign;
  foreign.mutable_return_leases()->set_worker_id(kWorkerB);
  *foreign.mutable_return_leases()->add_tasks() = Task(0, 0);
  ASSERT_THAT(state_.Apply(foreign), IsOk());
  EXPECT_EQ(state_.RankSummary(kJob, 0).leased, 2u);

  StateUpdate own;
  own.mutable_return_leases()->set_worker_id(kWorkerA);
  *own.mutable_return_leases()->add_tasks() = Task(0, 2);
  ASSERT_THAT(state_.Apply(own), IsOk());
  EXPECT_EQ(state_.RankSummary(kJob, 0).leased, 1u);
  EXPECT_THAT(Pairs(state_.PendingTasks(kJob, 0, 2)), ElementsAre(P{0, 2}, P{0, 4}));
  EXPECT_THAT(state_.RevokedLeases(kWorkerA), IsEmpty());  // handed back, not revoked
}

TEST_F(ClusterStateTest, SnapshotRestoresJobsProgressAndWorkersButNoLeases) {
  ASSERT_THAT(state_.Apply(Lease(kWorkerA, {Task(0, 0), Task(0, 2), Task(0, 4)}, 100)), IsOk());
  ASSERT_THAT(state_.Apply(Complete({Task(0, 0), Task(0, 4), Task(0, 1)})), IsOk());
  StateUpdate restore;
  *restore.mutable_restore() = state_.MakeSnapshot();

  ClusterState copy;
  ASSERT_THAT(copy.Apply(restore), IsOk());
  EXPECT_NE(copy.FindJobByName("default", "job"), nullptr);
  EXPECT_NE(copy.FindWorker(kWorkerB), nullptr);
  EXPECT_EQ(copy.next_job_id(), state_.next_job_id());
  EXPECT_EQ(copy.next_worker_id(), state_.next_worker_id());
  RankProgressSummary rank0 = copy.RankSummary(kJob, 0);
  EXPECT_EQ(rank0.done_watermark, 1u);
  EXPECT_EQ(rank0.done_above_watermark, 1u);
  EXPECT_EQ(rank0.leased, 0u);
  EXPECT_EQ(copy.RankSummary(kJob, 1).done_watermark, 1u);
  // Batch 2 was leased, not done: pending again.
  EXPECT_THAT(Pairs(copy.PendingTasks(kJob, 0, 2)), ElementsAre(P{0, 2}, P{0, 6}));

  EXPECT_THAT(copy.Apply(restore),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("not empty")));
}

TEST_F(ClusterStateTest, APrivateWorkerStaysPrivateThroughASnapshot) {
  StateUpdate update = Register(7, "127.0.0.1:9", 1);
  update.mutable_register_worker()->set_hybrid_client_id("trainer-a");
  update.mutable_register_worker()->set_pool("cpu-a");  // and in its pool (prices, scaling)
  ASSERT_THAT(state_.Apply(update), IsOk());
  StateUpdate restore;
  *restore.mutable_restore() = state_.MakeSnapshot();
  ClusterState copy;
  ASSERT_THAT(copy.Apply(restore), IsOk());
  ASSERT_NE(copy.FindWorker(7), nullptr);
  EXPECT_EQ(copy.FindWorker(7)->hybrid_client_id, "trainer-a");
  EXPECT_EQ(copy.FindWorker(kWorkerA)->hybrid_client_id, "");
  EXPECT_EQ(copy.FindWorker(7)->pool, "cpu-a");
}

}  // namespace
}  // namespace stoker
