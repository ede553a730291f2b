// Real worker streams over gRPC: the client's receive limit is derived from the job's batch
// bytes (common/grpc_settings.h), so a batch larger than the limit ends its stream with
// RESOURCE_EXHAUSTED while one that fits flows; and a stream that ends hands its unacknowledged
// leases back to the coordinator at once (not at lease expiry).

#include <memory>

#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/worker_stream.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::HasSubstr;

// 8 images of 32x32x3 float32: 98,304 bytes of tensor per batch.
pb::JobSpec FloatJob() {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(64);
  synthetic->set_height(32);
  synthetic->set_width(32);
  synthetic->set_channels(3);
  synthetic->set_num_classes(10);
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  spec.set_batch_size(8);
  spec.set_world_size(1);
  spec.set_epochs(1);
  return spec;
}

// Opens a stream with the limit that `batch_bytes` implies; returns how the first batch (or
// the stream's end) went.
absl::Status FirstBatch(TestCluster& cluster, uint64_t job_id, uint64_t batch_bytes) {
  auto factory =
      NewGrpcWorkerStreamFactory(batch_bytes, /*batch_size=*/8, cluster.tls_for(Role::kTrainer));
  absl::Notification got;
  absl::Status result;
  WorkerStreamHooks hooks;
  hooks.allocate = [] { return std::make_shared<pb::BatchMessage>(); };
  hooks.on_batch = [&](Batch) {
    if (!got.HasBeenNotified()) got.Notify();
  };
  hooks.on_done = [&](const absl::Status& status) {
    if (!got.HasBeenNotified()) {
      result = status;
      got.Notify();
    }
  };
  pb::OpenStream open;
  open.set_job_id(job_id);
  open.set_client_id("limit-test");
  std::unique_ptr<WorkerStream> stream =
      factory->Open(cluster.worker(0)->address(), open, std::move(hooks));
  stream->GrantCredit(1);
  got.WaitForNotificationWithTimeout(absl::Seconds(30));
  stream->Cancel();
  stream->Join();
  return result;
}

TEST(MessageLimitTest, BatchAboveTheDerivedLimitIsResourceExhausted) {
  auto cluster = TestCluster::Start(/*workers=*/1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  pb::OpenJobRequest request;
  request.set_name("limit");
  *request.mutable_spec() = FloatJob();
  auto job = (*cluster)->coordinator()->coordinator()->OpenJob(request);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->batch_bytes(), 98304u);

  // The job's own size: the batch arrives.
  EXPECT_TRUE(FirstBatch(**cluster, job->job_id(), job->batch_bytes()).ok());
  // A limit derived from a much smaller batch (64 KiB of slack < 96 KiB): refused.
  absl::Status status = FirstBatch(**cluster, job->job_id(), /*batch_bytes=*/1);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("message"));
}

TEST(MessageLimitTest, EndedStreamHandsItsLeasesBackAtOnce) {
  TestClusterOptions options;
  options.workers = 1;
  options.coordinator.lease_duration = absl::Hours(1);  // expiry can't be what requeues them
  auto cluster = TestCluster::Start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  pb::OpenJobRequest request;
  request.set_name("hand-back");
  *request.mutable_spec() = FloatJob();
  Coordinator* coordinator = (*cluster)->coordinator()->coordinator();
  auto job = coordinator->OpenJob(request);
  ASSERT_TRUE(job.ok()) << job.status();

  // One batch arrives and is never acknowledged; then the stream ends.
  ASSERT_TRUE(FirstBatch(**cluster, job->job_id(), job->batch_bytes()).ok());
  auto summary = [&] {
    return coordinator->InspectState(
        [&](const ClusterState& state) { return state.RankSummary(job->job_id(), 0); });
  };
  Clock* const clock = Clock::Real();
  const absl::Time deadline = clock->Now() + absl::Seconds(20);
  while (summary().leased > 0 && clock->Now() < deadline) clock->SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(summary().leased, 0u);
  EXPECT_GE(summary().requeued, 1u);
  EXPECT_EQ(summary().done_watermark, 0u);
}

}  // namespace
}  // namespace stoker
