#include "coordinator/coordinator_test_fixture_for_test.h"

namespace stoker {
namespace {

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
  request.set_hybrid_client_id("trainer-a");
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
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("received[0]: job 1 epoch 0 "
                                                                     "batch 1 is of rank 1")));
  task.set_epoch(9);
  EXPECT_THAT(ClientHeartbeat(job, 1, {task}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("received[0]")));
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
