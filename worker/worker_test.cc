// The worker's loops against a fake coordinator on a FakeClock: heartbeats follow the injected
// clock (no real sleeps), and a job the coordinator retired is evicted.

#include "worker/worker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <tuple>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr uint64_t kJob = 5;

// Registers the worker, answers heartbeats (retiring the jobs in `retire`) and GetJob.
class FakeCoordinator : public CoordinatorClient {
 public:
  absl::StatusOr<pb::RegisterWorkerResponse> RegisterWorker(
      const pb::RegisterWorkerRequest&) override {
    pb::RegisterWorkerResponse response;
    response.set_worker_id(7);
    response.set_heartbeat_interval_ms(1000);
    return response;
  }
  absl::StatusOr<pb::WorkerHeartbeatResponse> WorkerHeartbeat(
      const pb::WorkerHeartbeatRequest& request) override {
    absl::MutexLock lock(&mu_);
    heartbeats_.push_back(request);
    pb::WorkerHeartbeatResponse response;
    for (uint64_t job : request.jobs()) {
      if (job == retire_) response.add_retired_jobs(job);
    }
    return response;
  }
  absl::StatusOr<pb::GetJobResponse> GetJob(const pb::GetJobRequest&) override {
    pb::GetJobResponse response;
    pb::JobSpec* spec = response.mutable_spec();
    pb::SyntheticSource* source = spec->mutable_dataset()->mutable_synthetic();
    source->set_num_samples(64);
    source->set_height(4);
    source->set_width(4);
    source->set_channels(3);
    source->set_num_classes(2);
    spec->mutable_pipeline()->add_ops()->mutable_to_float();
    spec->set_batch_size(4);
    spec->set_world_size(1);
    spec->set_epochs(1);
    spec->set_shuffle(pb::SHUFFLE_MODE_NONE);
    return response;
  }

  void Retire(uint64_t job) {
    absl::MutexLock lock(&mu_);
    retire_ = job;
  }
  // Blocks (bounded by a real minute, a liveness guard only) until `n` heartbeats arrived.
  std::vector<pb::WorkerHeartbeatRequest> AwaitHeartbeats(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return heartbeats_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Minutes(1));
    return heartbeats_;
  }

 private:
  absl::Mutex mu_;
  std::vector<pb::WorkerHeartbeatRequest> heartbeats_ ABSL_GUARDED_BY(mu_);
  uint64_t retire_ ABSL_GUARDED_BY(mu_) = 0;
};

class RecordingSink : public BatchSink {
 public:
  void Send(OutgoingBatch) override {}
  void Fail(const absl::Status& status) override {
    absl::MutexLock lock(&mu_);
    failure_ = status;
  }
  absl::Status AwaitFailure() {
    absl::MutexLock lock(&mu_);
    auto failed = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return !failure_.ok(); };
    mu_.AwaitWithTimeout(absl::Condition(&failed), absl::Minutes(1));
    return failure_;
  }

 private:
  absl::Mutex mu_;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
};

class WorkerTest : public ::testing::Test {
 protected:
  WorkerTest() {
    auto coordinator = std::make_unique<FakeCoordinator>();
    coordinator_ = coordinator.get();
    WorkerConfig config;
    config.coordinator_address = "fake:1";
    config.threads = 1;
    worker_ = std::make_unique<Worker>(config, std::move(coordinator), &clock_);
  }
  ~WorkerTest() override { worker_->Stop(); }

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

TEST_F(WorkerTest, AnOpenWithABadCompressionIsInvalidArgumentNamingTheField) {
  ASSERT_TRUE(worker_->Start("127.0.0.1:1").ok());
  RecordingSink sink;
  for (const auto& [codec, level, field] :
       {std::tuple{pb::COMPRESSION_ZSTD, 42, "open.compression.level"},
        std::tuple{static_cast<pb::Compression>(9), 0, "open.compression.codec"}}) {
    pb::OpenStream open;
    open.set_job_id(kJob);
    open.set_client_id("c");
    open.mutable_compression()->set_codec(codec);
    open.mutable_compression()->set_level(level);
    absl::Notification opened;
    absl::Status status;
    worker_->OpenSessionAsync(open, &sink, [&](absl::StatusOr<std::shared_ptr<StreamSession>> s) {
      status = s.status();
      opened.Notify();
    });
    opened.WaitForNotification();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(status.message(), HasSubstr(field));
  }
}

}  // namespace
}  // namespace stoker
