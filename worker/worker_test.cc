// The worker's composition against a fake coordinator on a FakeClock: heartbeats follow the
// injected clock (no real sleeps), a job the coordinator retired is evicted and its streams
// ended, trace windows reach the jobs, acks are checked, reports go in heartbeats of bounded size
// sent back to back, a worker the coordinator dropped registers again without losing its
// reports, and --decoded-cache-pretouch maps the cache before registering. Each collaborator's own
// rules are tested beside it.

#include "worker/worker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "coordinator/status_matchers_for_test.h"
#include "worker/fake_coordinator_for_test.h"
#include "worker/task_id_for_test.h"

namespace stoker {
namespace {

using worker_testing::TaskOf;

namespace pb = ::stoker::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using worker_testing::FakeCoordinator;
using worker_testing::kBatchBytes;
using worker_testing::kJob;
using worker_testing::RecordingSink;

class WorkerTest : public ::testing::Test {
 protected:
  WorkerTest() {
    auto coordinator = std::make_unique<FakeCoordinator>();
    coordinator_ = coordinator.get();
    WorkerConfig config;
    config.coordinator_address = "fake:1";
    config.threads = 1;
    config.memory_bytes = 8 * kBatchBytes;  // one stream's share: 4 batches
    worker_ = std::make_unique<Worker>(config, std::move(coordinator), DatasetIo::FromEnvironment(),
                                       &clock_);
    worker_->SetRegistrationObserver([this](bool registered) {
      absl::MutexLock lock(&mu_);
      registrations_seen_.push_back(registered);
    });
  }
  ~WorkerTest() override { worker_->Stop(); }

  std::shared_ptr<StreamSession> Open(BatchSink* sink) {
    pb::OpenStream open;
    open.set_job_id(kJob);
    open.set_client_id("c");
    absl::Notification opened;
    std::shared_ptr<StreamSession> session;
    worker_->OpenSessionAsync(open, sink, [&](absl::StatusOr<std::shared_ptr<StreamSession>> s) {
      EXPECT_TRUE(s.ok()) << s.status();
      if (s.ok()) session = *s;
      opened.Notify();
    });
    opened.WaitForNotification();
    return session;
  }
  // One heartbeat interval, once both loops wait on the fake clock.
  void NextInterval() {
    clock_.AwaitSleepers(2);
    clock_.Advance(absl::Seconds(1));
  }
  // The registration changes the observer heard, once there are `n` (bounded by a real minute,
  // a liveness guard only).
  std::vector<bool> AwaitRegistrationsSeen(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]()
                      ABSL_SHARED_LOCKS_REQUIRED(mu_) { return registrations_seen_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Minutes(1));
    return registrations_seen_;
  }
  // One heartbeat interval; returns once the `n`th heartbeat arrived.
  void Beat(size_t n) {
    NextInterval();
    coordinator_->AwaitHeartbeats(n);
  }

  absl::Mutex mu_;
  std::vector<bool> registrations_seen_ ABSL_GUARDED_BY(mu_);

  FakeClock clock_;
  FakeCoordinator* coordinator_ = nullptr;
  std::unique_ptr<Worker> worker_;
};

TEST_F(WorkerTest, HeartbeatsFollowTheInjectedClock) {
  ASSERT_TRUE(worker_->Start("127.0.0.1:1").ok());
  clock_.AwaitSleepers(2);  // the heartbeat and lease loops wait on the fake clock
  EXPECT_THAT(coordinator_->AwaitHeartbeats(0), IsEmpty());
  clock_.Advance(absl::Seconds(1));  // one heartbeat interval, with no real time passing
  EXPECT_EQ(coordinator_->AwaitHeartbeats(1).size(), 1u);
  clock_.AwaitSleepers(2);
  EXPECT_EQ(coordinator_->AwaitHeartbeats(1).size(), 1u);  // none more until time moves
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(coordinator_->AwaitHeartbeats(2).size(), 2u);
}

TEST_F(WorkerTest, AJobTheCoordinatorRetiredIsDroppedAndItsStreamsEnded) {
  ASSERT_TRUE(worker_->Start("127.0.0.1:1").ok());
  RecordingSink sink;
  pb::OpenStream open;
  open.set_job_id(kJob);
  open.set_client_id("c");
  absl::Notification opened;
  std::shared_ptr<StreamSession> session;
  worker_->OpenSessionAsync(open, &sink, [&](absl::StatusOr<std::shared_ptr<StreamSession>> s) {
    ASSERT_TRUE(s.ok()) << s.status();
    session = *s;
    opened.Notify();
  });
  opened.WaitForNotification();
  clock_.AwaitSleepers(2);
  clock_.Advance(absl::Seconds(1));
  auto beats = coordinator_->AwaitHeartbeats(1);
  EXPECT_THAT(beats[0].jobs(), ElementsAre(kJob));  // the worker says what it holds

  coordinator_->Retire(kJob);
  clock_.AwaitSleepers(2);
  clock_.Advance(absl::Seconds(1));
  const absl::Status failure = sink.AwaitFailure();
  EXPECT_EQ(failure.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(failure.message(), HasSubstr("is no longer on the coordinator"));
  worker_->CloseSession(session);
  clock_.AwaitSleepers(2);
  clock_.Advance(absl::Seconds(1));
  beats = coordinator_->AwaitHeartbeats(3);
  EXPECT_THAT(beats[2].jobs(), IsEmpty());  // its context is gone
}

TEST_F(WorkerTest, TheCoordinatorsTraceControlSetsAJobsSampling) {
  ASSERT_TRUE(worker_->Start("127.0.0.1:1").ok());
  RecordingSink sink;
  const std::shared_ptr<StreamSession> session = Open(&sink);
  trace::SpanRecorder& recorder = session->job()->trace();
  EXPECT_EQ(recorder.sampling(), 0u);
  coordinator_->Trace(kJob, 4);
  Beat(1);
  Beat(2);  // heartbeats are sequential: the first response was applied
  EXPECT_EQ(recorder.sampling(), 4u);
  coordinator_->Trace(0, 0);  // the window ended
  Beat(3);
  Beat(4);
  EXPECT_EQ(recorder.sampling(), 0u);
  coordinator_->Trace(kJob, 1);
  Beat(5);
  Beat(6);
  EXPECT_EQ(recorder.sampling(), 1u);
  coordinator_->FailHeartbeats(absl::UnavailableError("coordinator down"));
  Beat(7);
  Beat(8);
  EXPECT_EQ(recorder.sampling(), 0u);  // nobody renews the window: off
  worker_->CloseSession(session);
}

// A batch of `task` as a producer hands it to a session.
std::unique_ptr<pb::BatchMessage> BatchOf(const pb::TaskId& task) {
  auto batch = std::make_unique<pb::BatchMessage>();
  *batch->mutable_header()->mutable_task() = task;
  return batch;
}

TEST_F(WorkerTest, AnAckOfATaskTheStreamWasNotSentIsInvalidArgumentAndCounted) {
  ASSERT_TRUE(worker_->Start("127.0.0.1:1").ok());
  RecordingSink sink;
  MessagePool pool(2);
  StreamSession session(nullptr, 0, "c", &sink, &pool, [] {});
  session.OnProduced(absl::OkStatus(), BatchOf(TaskOf(kJob, 0, 3)));
  pb::Ack ack;
  *ack.add_tasks() = TaskOf(kJob, 0, 3);
  EXPECT_THAT(worker_->Acknowledge(session, ack), IsOk());
  EXPECT_THAT(worker_->Acknowledge(session, ack),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("batch 3")))
      << "a double ack";
  pb::Ack unsent;
  for (uint64_t i = 0; i < 50000; ++i) *unsent.add_tasks() = TaskOf(kJob, 0, 1000 + i);
  EXPECT_THAT(worker_->Acknowledge(session, unsent),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("batch 1000")));
  EXPECT_EQ(worker_->protocol_errors(ProtocolError::kAckUnsent), 2u);

  NextInterval();
  const auto beats = coordinator_->AwaitHeartbeats(1);
  ASSERT_EQ(beats[0].delivered_size(), 1) << "only the task really delivered is reported";
  EXPECT_EQ(beats[0].delivered(0).batch_index(), 3u);
}

TEST_F(WorkerTest, DeliveredReportsGoInHeartbeatsThatFitTheCoordinatorsRequestLimit) {
  ASSERT_TRUE(worker_->Start("127.0.0.1:1").ok());
  RecordingSink sink;
  MessagePool pool(2);
  StreamSession session(nullptr, 0, "c", &sink, &pool, [] {});
  constexpr uint64_t kTasks = 10000;
  constexpr uint64_t kBigJob = uint64_t{1} << 50;  // ids as large as the coordinator mints
  pb::Ack ack;
  for (uint64_t i = 0; i < kTasks; ++i) {
    session.OnProduced(absl::OkStatus(), BatchOf(TaskOf(kBigJob, 0, i)));
    *ack.add_tasks() = TaskOf(kBigJob, 0, i);
  }
  ASSERT_THAT(worker_->Acknowledge(session, ack), IsOk());
  NextInterval();  // the first heartbeat; the rest follow at once, without time passing
  size_t reported = 0;
  size_t heartbeats = 0;
  while (reported < kTasks && heartbeats < kTasks) {
    const auto beats = coordinator_->AwaitHeartbeats(++heartbeats);
    ASSERT_GE(beats.size(), heartbeats) << "reports left behind wait for no interval";
    const pb::WorkerHeartbeatRequest& beat = beats[heartbeats - 1];
    reported += beat.delivered_size();
    EXPECT_LE(beat.ByteSizeLong(), TaskLedger::kHeartbeatBytes)
        << "half the smallest --max-request-bytes a coordinator accepts";
  }
  EXPECT_EQ(reported, kTasks);
  EXPECT_GE(heartbeats, 3u);
}

TEST_F(WorkerTest, ADroppedWorkerRegistersAgainKeepingItsReports) {
  ASSERT_TRUE(worker_->Start("127.0.0.1:1").ok());
  EXPECT_THAT(AwaitRegistrationsSeen(1), ElementsAre(true));
  RecordingSink sink;
  MessagePool pool(2);
  StreamSession session(nullptr, 0, "c", &sink, &pool, [] {});
  session.OnProduced(absl::OkStatus(), BatchOf(TaskOf(kJob, 0, 9)));
  pb::Ack ack;
  *ack.add_tasks() = TaskOf(kJob, 0, 9);
  ASSERT_THAT(worker_->Acknowledge(session, ack), IsOk());

  // A coordinator that refuses the heartbeats as too large, then has forgotten the worker and
  // cannot take a registration for a while.
  coordinator_->FailHeartbeats(absl::ResourceExhaustedError("received message larger than max"));
  const size_t refusals = WorkerRegistration::kExhaustedBeforeRegister;
  for (size_t n = 1; n < refusals; ++n) Beat(n);
  EXPECT_TRUE(worker_->registered());
  coordinator_->FailRegistrations(absl::UnavailableError("coordinator restarting"));
  Beat(refusals);
  EXPECT_THAT(AwaitRegistrationsSeen(2), ElementsAre(true, false));
  EXPECT_FALSE(worker_->registered());

  coordinator_->FailHeartbeats(absl::OkStatus());
  coordinator_->FailRegistrations(absl::OkStatus());
  NextInterval();  // registers
  EXPECT_THAT(AwaitRegistrationsSeen(3), ElementsAre(true, false, true));
  EXPECT_TRUE(worker_->registered());
  EXPECT_EQ(coordinator_->registrations(), 2);
  Beat(refusals + 1);  // with the new id and the reports kept
  const pb::WorkerHeartbeatRequest beat = coordinator_->AwaitHeartbeats(refusals + 1)[refusals];
  EXPECT_EQ(beat.worker_id(), 8u);
  ASSERT_EQ(beat.delivered_size(), 1);
  EXPECT_EQ(beat.delivered(0).batch_index(), 9u);
}

TEST_F(WorkerTest, AWorkerTheCoordinatorForgotRegistersAgain) {
  ASSERT_TRUE(worker_->Start("127.0.0.1:1").ok());
  coordinator_->FailHeartbeats(absl::NotFoundError("worker 7 is not registered"));
  Beat(1);
  EXPECT_THAT(AwaitRegistrationsSeen(3), ElementsAre(true, false, true));
  EXPECT_EQ(coordinator_->registrations(), 2);
  EXPECT_EQ(worker_->worker_id(), 8u);
}

// --decoded-cache-pretouch: the whole cache is mapped before the worker registers; without it,
// nothing is until an entry needs it.
TEST(WorkerDecodedCacheTest, PretouchMapsTheWholeCacheBeforeRegistering) {
  for (const bool pretouch : {false, true}) {
    FakeClock clock;
    WorkerConfig config;
    config.coordinator_address = "fake:1";
    config.threads = 1;
    config.memory_bytes = 32 << 20;
    config.decoded_cache_bytes = 8 << 20;
    config.decoded_cache_pretouch = pretouch;
    Worker worker(config, std::make_unique<FakeCoordinator>(), DatasetIo::FromEnvironment(),
                  &clock);
    ASSERT_TRUE(worker.Start("127.0.0.1:1").ok());
    const uint64_t mapped = worker.decoded_cache_stats()->mapped_bytes;
    if (pretouch) {
      // Each of the 16 shards' arena whole: its budget over one block's charge, in blocks.
      const uint64_t shard_blocks =
          (config.decoded_cache_bytes / 16) / DecodedCache::BlockCharge(1);
      EXPECT_EQ(mapped, 16 * shard_blocks * DecodedCache::kBlockBytes);
    } else {
      EXPECT_EQ(mapped, 0u);
    }
    worker.Stop();
  }
}

}  // namespace
}  // namespace stoker
