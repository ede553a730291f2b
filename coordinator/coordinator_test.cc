#include "coordinator/coordinator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "coordinator/coordinator_for_test.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"
#include "plan/resume_plan.h"

namespace stoker {
namespace {

using stoker::v1::TaskId;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

using P = std::pair<uint32_t, uint64_t>;

std::vector<P> Pairs(const stoker::v1::LeaseTasksResponse& response) {
  std::vector<P> out;
  for (const auto& lease : response.leases()) {
    out.emplace_back(lease.task().epoch(), lease.task().batch_index());
  }
  return out;
}

std::vector<P> Pairs(const google::protobuf::RepeatedPtrField<TaskId>& tasks) {
  std::vector<P> out;
  for (const TaskId& task : tasks) out.emplace_back(task.epoch(), task.batch_index());
  return out;
}

class CoordinatorTest : public ::testing::Test {
 protected:
  uint64_t OpenJob(const std::string& name, const stoker::v1::JobSpec& spec) {
    stoker::v1::OpenJobRequest request;
    request.set_name(name);
    *request.mutable_spec() = spec;
    auto response = coordinator_.OpenJob(request);
    EXPECT_THAT(response, IsOk());
    return response.ok() ? response->job_id() : 0;
  }

  absl::StatusOr<stoker::v1::OpenJobResponse> OpenJobWithSpec(const stoker::v1::JobSpec& spec) {
    stoker::v1::OpenJobRequest request;
    request.set_name("job");
    *request.mutable_spec() = spec;
    return coordinator_.OpenJob(request);
  }

  uint64_t Register(const std::string& address) {
    return RegisterTestWorker(coordinator_, address, 2);
  }

  absl::StatusOr<stoker::v1::WorkerHeartbeatResponse> Heartbeat(
      uint64_t worker, const std::vector<TaskId>& delivered = {}) {
    stoker::v1::WorkerHeartbeatRequest request;
    request.set_worker_id(worker);
    for (const TaskId& task : delivered) *request.add_delivered() = task;
    return coordinator_.WorkerHeartbeat(request);
  }

  absl::StatusOr<stoker::v1::LeaseTasksResponse> Lease(uint64_t worker, uint64_t job, uint32_t rank,
                                                       uint32_t max) {
    stoker::v1::LeaseTasksRequest request;
    request.set_worker_id(worker);
    request.set_job_id(job);
    request.set_rank(rank);
    request.set_max_tasks(max);
    return coordinator_.LeaseTasks(request);
  }

  absl::StatusOr<stoker::v1::ClientHeartbeatResponse> ClientHeartbeat(
      uint64_t job, uint32_t rank, const std::vector<TaskId>& consumed = {},
      const std::string& client_id = "client") {
    stoker::v1::ClientHeartbeatRequest request;
    request.set_job_id(job);
    request.set_rank(rank);
    request.set_client_id(client_id);
    for (const TaskId& task : consumed) *request.add_consumed() = task;
    return coordinator_.ClientHeartbeat(request);
  }

  // Advances the clock by `total` in heartbeat-sized steps; the listed workers heartbeat after
  // each step, so only the others go silent.
  void AdvanceKeepingAlive(absl::Duration total, const std::vector<uint64_t>& alive) {
    for (absl::Duration t; t < total; t += absl::Seconds(1)) {
      clock_.Advance(absl::Seconds(1));
      for (uint64_t worker : alive) ASSERT_THAT(Heartbeat(worker), IsOk());
    }
  }

  RankProgressSummary Summary(uint64_t job, uint32_t rank) {
    return coordinator_.InspectState(
        [&](const ClusterState& state) { return state.RankSummary(job, rank); });
  }

  uint64_t Done(uint64_t job, uint32_t rank) {
    const RankProgressSummary summary = Summary(job, rank);
    return summary.done_watermark + summary.done_above_watermark;
  }

  FakeClock clock_;
  Coordinator coordinator_{TestCoordinatorConfig(), &clock_};
};

TEST_F(CoordinatorTest, OpenJobIsIdempotentByName) {
  stoker::v1::OpenJobRequest request;
  request.set_name("train");
  *request.mutable_spec() = SmallJobSpec(/*world_size=*/2, /*epochs=*/3);
  auto first = coordinator_.OpenJob(request);
  ASSERT_THAT(first, IsOk());
  EXPECT_EQ(first->batches_per_epoch_per_rank(), 5u);
  EXPECT_EQ(first->num_samples(), 40u);
  EXPECT_EQ(first->batch_bytes(), 4u * 8 * 8 * 3 * 4);
  EXPECT_THAT(first->batch_shape(), ElementsAre(4, 8, 8, 3));
  auto second = coordinator_.OpenJob(request);
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(second->SerializeAsString(), first->SerializeAsString());

  request.mutable_spec()->set_seed(8);
  EXPECT_THAT(coordinator_.OpenJob(request),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       HasSubstr("job 'train' already exists (id 1) with a different spec")));
  request.set_name("train2");
  auto other = coordinator_.OpenJob(request);
  ASSERT_THAT(other, IsOk());
  EXPECT_NE(other->job_id(), first->job_id());
}

TEST_F(CoordinatorTest, OpenJobRejectsBadRequests) {
  stoker::v1::OpenJobRequest request;
  *request.mutable_spec() = SmallJobSpec();
  EXPECT_THAT(coordinator_.OpenJob(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("name")));

  stoker::v1::JobSpec spec = SmallJobSpec();
  spec.set_batch_size(0);
  EXPECT_THAT(OpenJobWithSpec(spec),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.batch_size")));
  spec = SmallJobSpec();
  spec.set_world_size(0);
  EXPECT_THAT(OpenJobWithSpec(spec),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.world_size")));
  spec = SmallJobSpec();
  spec.mutable_pipeline()->add_ops();  // an Op with no oneof set
  EXPECT_THAT(OpenJobWithSpec(spec),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.pipeline.ops[1]")));
  for (int ksize : {4, -3}) {
    spec = SmallJobSpec();
    spec.mutable_pipeline()->add_ops()->mutable_gaussian_blur()->set_ksize(ksize);
    EXPECT_THAT(OpenJobWithSpec(spec),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         ::testing::AllOf(HasSubstr("spec.pipeline.ops[1]"), HasSubstr("ksize"))))
        << "ksize " << ksize;
  }
  EXPECT_EQ(coordinator_.InspectState([](const ClusterState& s) { return s.num_jobs(); }), 0u);
}

// A token of rank `rank` of SmallJobSpec(world_size) (10 global batches), `prefix` consumed.
std::string Token(uint32_t world_size, uint32_t rank, uint32_t epoch, uint64_t prefix) {
  stoker::v1::ResumeToken token;
  token.set_version(kResumeTokenVersion);
  token.set_job_name("job");
  token.set_spec_fingerprint(SpecFingerprint(SmallJobSpec(world_size)));
  token.set_world_size(world_size);
  token.set_rank(rank);
  token.set_epoch(epoch);
  token.set_universe(10);
  token.set_consumed_prefix(prefix);
  return token.SerializeAsString();
}

TEST_F(CoordinatorTest, OpenJobWithATokenRestartsTheRank) {
  const uint64_t job = OpenJob("job", SmallJobSpec());
  const uint64_t worker = Register("w:1");
  ASSERT_THAT(Lease(worker, job, 0, 3), IsOk());  // (0,0) (0,2) (0,4)
  ASSERT_THAT(ClientHeartbeat(job, 0, {}), IsOk());

  stoker::v1::OpenJobRequest request;
  request.set_name("job");
  *request.mutable_spec() = SmallJobSpec();
  request.set_rank(0);
  request.add_resume_tokens(Token(2, 0, 0, 2));
  auto response = coordinator_.OpenJob(request);
  ASSERT_THAT(response, IsOk());
  EXPECT_EQ(response->job_id(), job);
  EXPECT_TRUE(response->start().resumed());
  EXPECT_THAT(response->start().deal(), ElementsAre(0, 2, 4, 6, 8));
  EXPECT_EQ(response->start().consumed_prefix(), 2u);
  // The old leases are revoked; the rank continues with batch 4.
  auto heartbeat = Heartbeat(worker);
  ASSERT_THAT(heartbeat, IsOk());
  EXPECT_THAT(Pairs(heartbeat->drop_leases()), ElementsAre(P{0, 0}, P{0, 2}, P{0, 4}));
  auto lease = Lease(worker, job, 0, 2);
  ASSERT_THAT(lease, IsOk());
  EXPECT_THAT(Pairs(*lease), ElementsAre(P{0, 4}, P{0, 6}));
  // A late ack of the old incarnation is ignored, not an error; so is a worker's report of a
  // task of the new list (the old incarnation may have received it after its checkpoint): a
  // worker's report never completes a task, leased to it or not.
  TaskId old;
  old.set_job_id(job);
  old.set_epoch(0);
  old.set_batch_index(0);
  EXPECT_THAT(Heartbeat(worker, {old}), IsOk());
  EXPECT_EQ(Summary(job, 0).total, 3u + 5u);
  TaskId unleased = old, leased = old;
  unleased.set_batch_index(8);
  leased.set_batch_index(4);
  EXPECT_THAT(Heartbeat(worker, {unleased, leased}), IsOk());
  EXPECT_EQ(Summary(job, 0).done_watermark, 0u);
  EXPECT_EQ(Summary(job, 0).done_above_watermark, 0u);
  // The client's own report completes any task of its rank.
  EXPECT_THAT(ClientHeartbeat(job, 0, {unleased, leased}), IsOk());
  EXPECT_EQ(Summary(job, 0).done_watermark, 1u);
  EXPECT_EQ(Summary(job, 0).done_above_watermark, 1u);
}

TEST_F(CoordinatorTest, OpenJobWithTokensOfAnotherWorldSizeNeedsAllOfThem) {
  stoker::v1::OpenJobRequest request;
  request.set_name("job-3");
  *request.mutable_spec() = SmallJobSpec(/*world_size=*/3);
  request.set_rank(2);
  request.add_resume_tokens(Token(2, 0, 0, 2));
  EXPECT_THAT(coordinator_.OpenJob(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("resuming with world_size 3 from a checkpoint of world_size 2 "
                                 "needs the tokens of all 2 ranks, got 1")));
  request.add_resume_tokens(Token(2, 1, 0, 1));
  auto response = coordinator_.OpenJob(request);
  ASSERT_THAT(response, IsOk());
  // Remaining 3..9 (rank 0 consumed 0, 2; rank 1 consumed 1) over 3 ranks with drop_last:
  // slots 3 4 5 / 6 7 8, batch 9 is dropped; rank 2 gets 5 and 8.
  EXPECT_THAT(response->start().deal(), ElementsAre(5, 8));
  request.set_rank(3);
  EXPECT_THAT(coordinator_.OpenJob(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rank: 3")));
  request.set_rank(0);
  request.clear_resume_tokens();
  request.add_resume_tokens("garbage");
  EXPECT_THAT(coordinator_.OpenJob(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resume_tokens[0]")));
}

TEST_F(CoordinatorTest, GetJob) {
  const uint64_t job = OpenJob("train", SmallJobSpec());
  stoker::v1::GetJobRequest request;
  request.set_job_id(job);
  auto response = coordinator_.GetJob(request);
  ASSERT_THAT(response, IsOk());
  EXPECT_EQ(response->name(), "train");
  EXPECT_EQ(response->spec().SerializeAsString(), SmallJobSpec().SerializeAsString());
  EXPECT_EQ(response->batches_per_epoch_per_rank(), 5u);
  request.set_job_id(job + 1);
  EXPECT_THAT(coordinator_.GetJob(request),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("job 2: no such job")));
}

TEST_F(CoordinatorTest, OpenJobPlacesTheTailOnceForEveryRank) {
  stoker::v1::JobSpec spec = SmallJobSpec();
  spec.mutable_pipeline()->set_output_dtype(stoker::v1::DTYPE_FLOAT32);
  spec.set_tail(stoker::v1::TAIL_PLACEMENT_AUTO);
  stoker::v1::OpenJobRequest request;
  request.set_name("placed");
  *request.mutable_spec() = spec;
  std::vector<stoker::v1::OpenJobResponse> ranks;
  for (uint32_t rank : {0u, 1u}) {
    request.set_rank(rank);
    auto response = coordinator_.OpenJob(request);
    ASSERT_THAT(response, IsOk());
    ranks.push_back(*response);
  }
  for (const stoker::v1::OpenJobResponse& response : ranks) {
    EXPECT_EQ(response.job_id(), ranks[0].job_id());
    ASSERT_TRUE(response.has_client_tail());
    ASSERT_EQ(response.client_tail().ops_size(), 1);
    EXPECT_TRUE(response.client_tail().ops(0).has_to_float());
    // The workers' uint8 HWC batches.
    EXPECT_THAT(response.batch_shape(), ::testing::ElementsAre(4, 8, 8, 3));
    EXPECT_EQ(response.batch_bytes(), 4u * 8 * 8 * 3);
  }
  stoker::v1::GetJobRequest get;
  get.set_job_id(ranks[0].job_id());
  auto job = coordinator_.GetJob(get);
  ASSERT_THAT(job, IsOk());
  EXPECT_EQ(job->spec().pipeline().ops_size(), 0);
  EXPECT_EQ(job->spec().pipeline().output_dtype(), stoker::v1::DTYPE_UINT8);
  EXPECT_EQ(job->spec().tail(), stoker::v1::TAIL_PLACEMENT_CLIENT);

  // Another placement for the same name is another spec.
  request.mutable_spec()->set_tail(stoker::v1::TAIL_PLACEMENT_WORKER);
  EXPECT_THAT(coordinator_.OpenJob(request),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("different spec")));
}

TEST_F(CoordinatorTest, RegisterWorker) {
  stoker::v1::RegisterWorkerRequest request;
  request.set_cores(2);
  EXPECT_THAT(coordinator_.RegisterWorker(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("address")));
  request.set_address("w:1");
  request.set_cores(0);
  EXPECT_THAT(coordinator_.RegisterWorker(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cores")));
  request.set_cores(2);
  auto response = coordinator_.RegisterWorker(request);
  ASSERT_THAT(response, IsOk());
  EXPECT_EQ(response->heartbeat_interval_ms(), 500u);
  EXPECT_NE(response->worker_id(), 0u);
}

TEST_F(CoordinatorTest, RegisteringTheSameAddressAgainReplacesTheWorker) {
  const uint64_t job = OpenJob("train", SmallJobSpec());
  const uint64_t old_id = Register("w:1");
  ASSERT_THAT(Lease(old_id, job, 0, 2), IsOk());
  const uint64_t new_id = Register("w:1");
  EXPECT_NE(new_id, old_id);
  EXPECT_THAT(Heartbeat(old_id), StatusIs(absl::StatusCode::kNotFound, HasSubstr("register")));
  auto lease = Lease(new_id, job, 0, 2);
  ASSERT_THAT(lease, IsOk());
  EXPECT_THAT(Pairs(*lease), ElementsAre(P{0, 0}, P{0, 2}));
}

TEST_F(CoordinatorTest, LeaseTasksValidatesTheRequest) {
  const uint64_t job = OpenJob("train", SmallJobSpec());
  const uint64_t worker = Register("w:1");
  EXPECT_THAT(Lease(worker, job, 0, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_tasks")));
  EXPECT_THAT(Lease(worker, job, 2, 1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rank: 2")));
  EXPECT_THAT(Lease(worker, job + 1, 0, 1),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("job 2: no such job")));
  EXPECT_THAT(Lease(worker + 1, job, 0, 1),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("register again")));
  // Capped at max_tasks_per_lease (8).
  auto lease = Lease(worker, job, 0, 100);
  ASSERT_THAT(lease, IsOk());
  EXPECT_THAT(lease->leases(), SizeIs(8));
  EXPECT_EQ(lease->leases(0).expires_unix_ms(),
            absl::ToUnixMillis(clock_.Now() + absl::Seconds(30)));
  EXPECT_FALSE(lease->rank_finished());
}

TEST_F(CoordinatorTest, ExpiredLeasesGoToAnotherWorkerAndTheHolderIsToldToDropThem) {
  const uint64_t job = OpenJob("train", SmallJobSpec());
  const uint64_t a = Register("a:1");
  const uint64_t b = Register("b:1");
  auto first = Lease(a, job, 0, 3);
  ASSERT_THAT(first, IsOk());
  EXPECT_THAT(Pairs(*first), ElementsAre(P{0, 0}, P{0, 2}, P{0, 4}));

  AdvanceKeepingAlive(absl::Seconds(29), {a, b});
  clock_.Advance(absl::Seconds(1));  // the leases expire now (at or before: expired)
  auto second = Lease(b, job, 0, 4);
  ASSERT_THAT(second, IsOk());
  EXPECT_THAT(Pairs(*second), ElementsAre(P{0, 0}, P{0, 2}, P{0, 4}, P{0, 6}));

  auto heartbeat = Heartbeat(a);
  ASSERT_THAT(heartbeat, IsOk());
  EXPECT_THAT(Pairs(heartbeat->drop_leases()), ElementsAre(P{0, 0}, P{0, 2}, P{0, 4}));
  heartbeat = Heartbeat(a);
  ASSERT_THAT(heartbeat, IsOk());
  EXPECT_THAT(heartbeat->drop_leases(), IsEmpty());
}

TEST_F(CoordinatorTest, SilentWorkerIsRemovedAndItsTasksLeasedToAnother) {
  const uint64_t job = OpenJob("train", SmallJobSpec());
  const uint64_t a = Register("a:1");
  const uint64_t b = Register("b:1");
  ASSERT_THAT(Lease(a, job, 1, 2), IsOk());

  AdvanceKeepingAlive(absl::Seconds(5), {b});  // a silent for exactly worker_timeout: kept
  EXPECT_TRUE(
      coordinator_.InspectState([&](const ClusterState& s) { return s.FindWorker(a) != nullptr; }));
  clock_.Advance(absl::Milliseconds(1));
  coordinator_.CheckLiveness();
  EXPECT_TRUE(
      coordinator_.InspectState([&](const ClusterState& s) { return s.FindWorker(a) == nullptr; }));

  auto lease = Lease(b, job, 1, 3);
  ASSERT_THAT(lease, IsOk());
  EXPECT_THAT(Pairs(*lease), ElementsAre(P{0, 1}, P{0, 3}, P{0, 5}));
  EXPECT_THAT(Heartbeat(a),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("worker 1 is not registered")));
  EXPECT_THAT(Lease(a, job, 1, 1),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("register again")));
  auto client = ClientHeartbeat(job, 1);
  ASSERT_THAT(client, IsOk());
  ASSERT_THAT(client->workers(), SizeIs(1));
  EXPECT_EQ(client->workers(0).address(), "b:1");
}

TEST_F(CoordinatorTest, ReturnedLeasesArePendingAtOnceButOnlyFromTheirHolder) {
  const uint64_t job = OpenJob("train", SmallJobSpec());
  const uint64_t a = Register("a:1");
  const uint64_t b = Register("b:1");
  auto first = Lease(a, job, 0, 2);
  ASSERT_THAT(first, IsOk());
  ASSERT_THAT(Pairs(*first), ElementsAre(P{0, 0}, P{0, 2}));

  // b does not hold them: its hand-back is ignored.
  stoker::v1::WorkerHeartbeatRequest stale;
  stale.set_worker_id(b);
  *stale.add_returned() = first->leases(0).task();
  ASSERT_THAT(coordinator_.WorkerHeartbeat(stale), IsOk());
  EXPECT_EQ(Summary(job, 0).leased, 2u);

  // a hands back batch 0 (its stream closed): pending again without waiting for expiry.
  stoker::v1::WorkerHeartbeatRequest hand_back;
  hand_back.set_worker_id(a);
  *hand_back.add_returned() = first->leases(0).task();
  ASSERT_THAT(coordinator_.WorkerHeartbeat(hand_back), IsOk());
  EXPECT_EQ(Summary(job, 0).leased, 1u);
  EXPECT_EQ(Summary(job, 0).requeued, 1u);
  auto second = Lease(b, job, 0, 2);
  ASSERT_THAT(second, IsOk());
  EXPECT_THAT(Pairs(*second), ElementsAre(P{0, 0}, P{0, 4}));

  // Handing back again, now that b holds it, changes nothing; nor is a told to drop it.
  auto again = coordinator_.WorkerHeartbeat(hand_back);
  ASSERT_THAT(again, IsOk());
  EXPECT_THAT(again->drop_leases(), IsEmpty());
  EXPECT_EQ(Summary(job, 0).leased, 3u);
}

TEST_F(CoordinatorTest, WorkerHeartbeatReleasesDeliveredLeasesWithoutCompletingThem) {
  const uint64_t job = OpenJob("train", SmallJobSpec());
  const uint64_t worker = Register("w:1");
  auto lease = Lease(worker, job, 0, 3);
  ASSERT_THAT(lease, IsOk());
  TaskId bogus;
  bogus.set_job_id(77);  // unknown job: ignored, the heartbeat still counts
  ASSERT_THAT(Heartbeat(worker, {lease->leases(0).task(), lease->leases(1).task(), bogus}), IsOk());
  EXPECT_EQ(Summary(job, 0).done_watermark, 0u);  // only the client completes
  EXPECT_EQ(Summary(job, 0).leased, 3u);
  coordinator_.InspectState([&](const ClusterState& state) {
    const std::vector<TaskId> own = state.LeasesOf(worker);
    ASSERT_THAT(own, SizeIs(1));
    EXPECT_EQ(own[0].batch_index(), lease->leases(2).task().batch_index());
    EXPECT_EQ(state.LeaseHolder(lease->leases(0).task()), ClusterState::kReleased);
  });
  // The worker is lost: its own lease returns to pending, the released ones (its client has
  // them) do not.
  clock_.Advance(absl::Seconds(6));
  coordinator_.CheckLiveness();
  EXPECT_EQ(Summary(job, 0).requeued, 1u);
  EXPECT_EQ(Summary(job, 0).leased, 2u);
  ASSERT_THAT(ClientHeartbeat(job, 0, {lease->leases(0).task()}), IsOk());
  EXPECT_EQ(Summary(job, 0).done_watermark, 1u);
  // The other was never reported by its client: pending again once its lease expires.
  clock_.Advance(absl::Seconds(30));
  coordinator_.CheckLiveness();
  EXPECT_EQ(Summary(job, 0).leased, 0u);
  EXPECT_EQ(Summary(job, 0).requeued, 2u);
}

TEST_F(CoordinatorTest, ClientHeartbeatCompletesConsumedTasks) {
  const uint64_t job = OpenJob("train", SmallJobSpec());
  const uint64_t worker = Register("w:1");
  auto lease = Lease(worker, job, 1, 2);
  ASSERT_THAT(lease, IsOk());
  auto response = ClientHeartbeat(job, 1, {lease->leases(1).task()});
  ASSERT_THAT(response, IsOk());
  EXPECT_EQ(response->state(), stoker::v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Summary(job, 1).done_above_watermark, 1u);
  ASSERT_THAT(ClientHeartbeat(job, 1, {lease->leases(0).task()}), IsOk());
  EXPECT_EQ(Summary(job, 1).done_watermark, 2u);
}

std::vector<std::string> Addresses(const stoker::v1::ClientHeartbeatResponse& response) {
  std::vector<std::string> addresses;
  for (const stoker::v1::WorkerInfo& worker : response.workers()) {
    addresses.push_back(worker.address());
  }
  return addresses;
}

// The worker list a heartbeat carries is built once per change of the workers: it follows
// registrations and removals.
TEST_F(CoordinatorTest, ClientHeartbeatListsTheWorkersOfTheMoment) {
  const uint64_t job = OpenJob("train", SmallJobSpec());
  const uint64_t first = Register("a:1");
  EXPECT_THAT(Addresses(*ClientHeartbeat(job, 0, {})), ElementsAre("a:1"));
  Register("b:1");
  EXPECT_THAT(Addresses(*ClientHeartbeat(job, 0, {})), ElementsAre("a:1", "b:1"));
  const uint64_t again = Register("a:1");  // a restart: the old entry is removed
  auto response = ClientHeartbeat(job, 0, {});
  ASSERT_THAT(response, IsOk());
  ASSERT_THAT(Addresses(*response), ElementsAre("b:1", "a:1"));
  EXPECT_NE(again, first);
  EXPECT_EQ(response->workers(1).worker_id(), again);
}

TEST_F(CoordinatorTest, APrivateWorkerIsListedOnlyToItsClient) {
  const uint64_t job = OpenJob("train", SmallJobSpec());
  Register("shared:1");
  stoker::v1::RegisterWorkerRequest request;
  request.set_address("127.0.0.1:5");
  request.set_cores(1);
  request.set_private_to_client("trainer-a");
  ASSERT_THAT(coordinator_.RegisterWorker(request), IsOk());
  auto own = ClientHeartbeat(job, 0, {}, "trainer-a");
  ASSERT_THAT(own, IsOk());
  EXPECT_THAT(Addresses(*own), ElementsAre("shared:1", "127.0.0.1:5"));
  auto other = ClientHeartbeat(job, 1, {}, "trainer-b");
  ASSERT_THAT(other, IsOk());
  EXPECT_THAT(Addresses(*other), ElementsAre("shared:1"));
}

TEST_F(CoordinatorTest, ClientHeartbeatValidatesTheRequest) {
  const uint64_t job = OpenJob("train", SmallJobSpec());
  EXPECT_THAT(ClientHeartbeat(job + 1, 0),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("job 2: no such job")));
  EXPECT_THAT(ClientHeartbeat(job, 2),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rank: 2")));
  TaskId task;
  task.set_job_id(job);
  task.set_batch_index(1);  // rank 1's
  EXPECT_THAT(ClientHeartbeat(job, 0, {task}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("consumed[0]: job 1 epoch 0 "
                                                                     "batch 1 is of rank 1")));
  task.set_epoch(9);
  EXPECT_THAT(ClientHeartbeat(job, 1, {task}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("consumed[0]")));
  task.set_epoch(0);
  task.set_job_id(job + 1);
  EXPECT_THAT(ClientHeartbeat(job, 1, {task}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not of job 1")));
}

// Two ranks, three epochs: leasing everything and completing it yields every global batch
// exactly once per epoch, each to the rank g mod R, in plan order per rank.
TEST_F(CoordinatorTest, EveryBatchOncePerEpochToItsRank) {
  constexpr uint32_t kRanks = 2;
  constexpr uint32_t kEpochs = 3;
  const uint64_t job = OpenJob("train", SmallJobSpec(kRanks, kEpochs));
  const uint64_t a = Register("a:1");
  const uint64_t b = Register("b:1");
  std::map<P, int> seen;
  for (uint32_t rank = 0; rank < kRanks; ++rank) {
    std::vector<P> order;
    bool finished = false;
    for (int round = 0; !finished; ++round) {
      ASSERT_LT(round, 100);
      const uint64_t worker = round % 2 == 0 ? a : b;
      auto lease = Lease(worker, job, rank, 3);
      ASSERT_THAT(lease, IsOk());
      finished = lease->rank_finished();
      std::vector<TaskId> tasks;
      for (const auto& l : lease->leases()) {
        EXPECT_EQ(l.task().batch_index() % kRanks, rank);
        order.emplace_back(l.task().epoch(), l.task().batch_index());
        ++seen[order.back()];
        tasks.push_back(l.task());
      }
      if (round % 2 == 0) {
        ASSERT_THAT(Heartbeat(worker, tasks), IsOk());  // releases only
      }
      ASSERT_THAT(ClientHeartbeat(job, rank, tasks), IsOk());
      if (round % 2 == 1) {
        ASSERT_THAT(Heartbeat(worker, tasks), IsOk());  // after the client's: harmless
      }
    }
    EXPECT_TRUE(std::is_sorted(order.begin(), order.end())) << "rank " << rank;
    EXPECT_THAT(order, SizeIs(5 * kEpochs));
  }
  EXPECT_THAT(seen, SizeIs(10 * kEpochs));
  for (const auto& [task, count] : seen) {
    EXPECT_EQ(count, 1) << "epoch " << task.first << " batch " << task.second;
    EXPECT_LT(task.first, kEpochs);
    EXPECT_LT(task.second, 10u);
  }
  auto client = ClientHeartbeat(job, 0);
  ASSERT_THAT(client, IsOk());
  EXPECT_EQ(client->state(), stoker::v1::JOB_STATE_FINISHED);
}

// A second client cannot report consumed tasks of a rank another live client holds (a forged
// report would make that client skip batches); once the holder is silent for worker_timeout, a
// new client (a restarted trainer) takes the rank over.
TEST_F(CoordinatorTest, OnlyTheClientHoldingARankReportsForIt) {
  const uint64_t job = OpenJob("held", SmallJobSpec());
  const uint64_t worker = Register("w:1");
  auto lease = Lease(worker, job, 0, 2);
  ASSERT_THAT(lease, IsOk());
  ASSERT_EQ(lease->leases_size(), 2);
  const TaskId first = lease->leases(0).task();
  ASSERT_THAT(ClientHeartbeat(job, 0, {}, "trainer"), IsOk());
  EXPECT_THAT(ClientHeartbeat(job, 0, {first}, "forger"),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("held by another client")));
  EXPECT_EQ(Done(job, 0), 0u);
  EXPECT_THAT(ClientHeartbeat(job, 0, {first}, "trainer"), IsOk());
  EXPECT_EQ(Done(job, 0), 1u);
  AdvanceKeepingAlive(absl::Seconds(5), {worker});  // The trainer falls silent.
  EXPECT_THAT(ClientHeartbeat(job, 0, {lease->leases(1).task()}, "restarted"), IsOk());
  EXPECT_EQ(Done(job, 0), 2u);
  EXPECT_THAT(ClientHeartbeat(job, 0, {}, "trainer"),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("held by another client")));
}

}  // namespace
}  // namespace stoker
