// The trainer client's thread count does not grow with the number of workers: its worker streams
// are gRPC callback reactors (trainer_client/worker_stream.h), not threads of their own. A
// loader streams from 32 in-process workers (TestCluster) and the process's threads
// (/proc/self/task) are counted before it opens and while every stream is open.

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "tests/testing/drain_loader.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

constexpr int kWorkers = 32;
constexpr uint32_t kBatchSize = 2;
constexpr uint64_t kBatches = 4096;
// Threads the loader may add to the process, whatever the number of workers: its heartbeat
// thread and what gRPC's shared pools grow by. The sync-API client this replaced added two per
// worker stream (64 here).
constexpr int kMaxClientThreads = 10;

int ProcessThreads() {
  int threads = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator("/proc/self/task")) {
    ++threads;
  }
  return threads;
}

pb::JobSpec TinyJob() {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(kBatches * kBatchSize);
  synthetic->set_height(4);
  synthetic->set_width(4);
  synthetic->set_channels(1);
  synthetic->set_num_classes(2);
  spec.set_batch_size(kBatchSize);
  spec.set_seed(3);
  spec.set_world_size(1);
  spec.set_epochs(1);
  spec.set_drop_last(true);
  return spec;
}

TEST(ClientThreadsTest, ThirtyTwoWorkerStreamsAddAFixedNumberOfThreads) {
  TestClusterOptions cluster_options;
  cluster_options.workers = kWorkers;
  cluster_options.coordinator.heartbeat_interval = absl::Milliseconds(100);
  absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start(cluster_options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const int before = ProcessThreads();

  LoaderOptions options;
  options.coordinator_address = (*cluster)->coordinator_address();
  options.tls = (*cluster)->tls_for(Role::kTrainer);
  options.job_name = "client-threads";
  options.spec = TinyJob();
  options.heartbeat_interval = absl::Milliseconds(50);
  options.prefetch_bytes = 2 * kWorkers * kBatchSize * 16;  // two batches per stream
  absl::StatusOr<std::unique_ptr<Loader>> loader = Loader::Open(options);
  ASSERT_TRUE(loader.ok()) << loader.status();

  // Consume until every worker has delivered, so that all 32 streams are open and busy.
  std::set<uint64_t> workers;
  uint64_t consumed = 0;
  while (workers.size() < kWorkers && consumed < kBatches) {
    absl::StatusOr<Batch> batch = (*loader)->Next();
    ASSERT_TRUE(batch.ok()) << batch.status();
    workers.insert(batch->worker_id());
    ++consumed;
  }
  ASSERT_EQ(workers.size(), static_cast<size_t>(kWorkers)) << "after " << consumed << " batches";
  const int during = ProcessThreads();
  EXPECT_GE((*loader)->stats().streams_opened, static_cast<uint64_t>(kWorkers));
  EXPECT_LE(during - before, kMaxClientThreads)
      << before << " threads before the loader, " << during << " with 32 streams open";

  // The rest of the job still arrives, each batch once.
  absl::Status drained = DrainLoader(**loader, [&](Batch&) {
    ++consumed;
    return absl::OkStatus();
  });
  ASSERT_TRUE(drained.ok()) << drained;
  EXPECT_EQ(consumed, kBatches);
}

}  // namespace
}  // namespace stoker
