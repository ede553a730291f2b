// Credit balancing, the byte budget and hedging over real gRPC on loopback (TestCluster), with
// simulated production (worker/simulated_batch.h) so that worker speeds are set, not measured.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/drain_loader.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

constexpr uint32_t kBatchSize = 4;
constexpr uint64_t kBatchBytes = kBatchSize * 8 * 8 * 3;  // uint8 8x8x3 images

pb::JobSpec SimulatedJob(uint64_t batches, uint32_t epochs) {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(batches * kBatchSize);
  synthetic->set_height(8);
  synthetic->set_width(8);
  synthetic->set_channels(3);
  synthetic->set_num_classes(10);
  spec.set_batch_size(kBatchSize);
  spec.set_seed(5);
  spec.set_shuffle(pb::SHUFFLE_MODE_NONE);
  spec.set_world_size(1);
  spec.set_epochs(epochs);
  spec.set_drop_last(true);
  return spec;
}

// Workers whose producers emit one batch per `periods[i]`.
std::unique_ptr<TestCluster> StartCluster(std::vector<absl::Duration> periods) {
  TestClusterOptions options;
  options.workers = static_cast<int>(periods.size());
  options.coordinator.heartbeat_interval = absl::Milliseconds(100);
  options.coordinator.worker_timeout = absl::Seconds(5);
  // Long leases: a stalled worker's tasks come back only through hedging.
  options.coordinator.lease_duration = absl::Minutes(10);
  options.configure_worker = [periods](size_t index, WorkerConfig* config) {
    config->simulate_batch_period = periods[index];
  };
  absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start(options);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return cluster.ok() ? *std::move(cluster) : nullptr;
}

LoaderOptions Options(const TestCluster& cluster, const std::string& job, pb::JobSpec spec,
                      uint64_t prefetch_batches) {
  LoaderOptions options;
  options.coordinator_address = cluster.coordinator_address();
  options.tls = cluster.tls_for(Role::kTrainer);
  options.job_name = job;
  options.spec = std::move(spec);
  options.heartbeat_interval = absl::Milliseconds(50);
  options.prefetch_bytes = prefetch_batches * kBatchBytes;
  return options;
}

// Delivered batches by (epoch, batch index): how often each was handed out.
using Counts = std::map<std::pair<uint32_t, uint64_t>, int>;

absl::Status ConsumeRest(Loader& loader, Counts* counts) {
  return DrainLoader(loader, [&](Batch& batch) {
    ++(*counts)[{batch.epoch(), batch.batch_index()}];
    return absl::OkStatus();
  });
}

void ExpectEachBatchOnce(const Counts& counts, uint32_t epochs, uint64_t batches) {
  EXPECT_EQ(counts.size(), epochs * batches);
  for (const auto& [task, count] : counts) {
    EXPECT_EQ(count, 1) << "epoch " << task.first << " batch " << task.second;
  }
}

TEST(BalanceTest, BalancingPrefersTheFastWorker) {
  auto cluster = StartCluster({absl::Milliseconds(2), absl::Milliseconds(50)});
  ASSERT_NE(cluster, nullptr);
  constexpr uint64_t kBatches = 1500;
  auto loader =
      Loader::Open(Options(*cluster, "prefer-fast", SimulatedJob(kBatches, 1), /*prefetch=*/16));
  ASSERT_TRUE(loader.ok()) << loader.status();
  Counts counts;
  // Past the balancer's 2 s rate window, while both streams still have work.
  for (uint64_t i = 0; i < kBatches * 3 / 4; ++i) {
    absl::StatusOr<Batch> batch = (*loader)->Next();
    ASSERT_TRUE(batch.ok()) << batch.status();
    ++counts[{batch->epoch(), batch->batch_index()}];
  }
  const LoaderStats mid = (*loader)->stats();
  ASSERT_EQ(mid.workers.size(), 2u);
  const WorkerReceiveStats& fast =
      mid.workers[0].address == cluster->worker(0)->address() ? mid.workers[0] : mid.workers[1];
  const WorkerReceiveStats& slow = &fast == &mid.workers[0] ? mid.workers[1] : mid.workers[0];
  EXPECT_GT(fast.batches, slow.batches);
  EXPECT_GT(fast.share, slow.share);
  EXPECT_LE(fast.share + slow.share, 16u);
  ASSERT_TRUE(ConsumeRest(**loader, &counts).ok());
  ExpectEachBatchOnce(counts, 1, kBatches);
}

TEST(BalanceTest, ByteBudgetIsNeverExceeded) {
  // Uneven speeds shift the shares while two epochs run (so the stall extra may apply too).
  auto cluster =
      StartCluster({absl::Milliseconds(1), absl::Milliseconds(5), absl::Milliseconds(20)});
  ASSERT_NE(cluster, nullptr);
  constexpr uint64_t kBatches = 300;
  constexpr uint64_t kPrefetch = 9;
  auto loader = Loader::Open(Options(*cluster, "budget", SimulatedJob(kBatches, 2), kPrefetch));
  ASSERT_TRUE(loader.ok()) << loader.status();
  Counts counts;
  ASSERT_TRUE(ConsumeRest(**loader, &counts).ok());
  ExpectEachBatchOnce(counts, 2, kBatches);
  const LoaderStats stats = (*loader)->stats();
  EXPECT_EQ(stats.budget_bytes, kPrefetch * kBatchBytes);
  EXPECT_GT(stats.max_committed_bytes, 0u);
  EXPECT_LE(stats.max_committed_bytes,
            stats.budget_bytes + uint64_t{stats.max_stall_extra} * stats.max_streams * kBatchBytes);
}

TEST(BalanceTest, ByteBudgetHoldsExactlyWithoutAStall) {
  // One epoch: no later-epoch batches, so no stall extra: the budget itself is the bound.
  auto cluster = StartCluster({absl::Milliseconds(1), absl::Milliseconds(10)});
  ASSERT_NE(cluster, nullptr);
  constexpr uint64_t kPrefetch = 6;
  auto loader = Loader::Open(Options(*cluster, "budget-1", SimulatedJob(400, 1), kPrefetch));
  ASSERT_TRUE(loader.ok()) << loader.status();
  Counts counts;
  ASSERT_TRUE(ConsumeRest(**loader, &counts).ok());
  ExpectEachBatchOnce(counts, 1, 400);
  const LoaderStats stats = (*loader)->stats();
  EXPECT_EQ(stats.max_stall_extra, 0u);
  EXPECT_LE(stats.max_committed_bytes, kPrefetch * kBatchBytes);
}

TEST(BalanceTest, HedgingFinishesTheEpochPastAStalledWorker) {
  // Worker 2 takes its leases and never finishes a batch (an hour per batch).
  auto cluster = StartCluster({absl::Milliseconds(1), absl::Milliseconds(1), absl::Hours(1)});
  ASSERT_NE(cluster, nullptr);
  constexpr uint64_t kBatches = 60;
  auto loader = Loader::Open(Options(*cluster, "hedge", SimulatedJob(kBatches, 2), 12));
  ASSERT_TRUE(loader.ok()) << loader.status();
  Counts counts;
  ASSERT_TRUE(ConsumeRest(**loader, &counts).ok());
  ExpectEachBatchOnce(counts, 2, kBatches);
  const LoaderStats stats = (*loader)->stats();
  EXPECT_GT(stats.overdue_reported, 0u);
  for (const WorkerReceiveStats& worker : stats.workers) {
    if (worker.address == cluster->worker(2)->address()) {
      EXPECT_EQ(worker.batches, 0u);
    }
  }
}

}  // namespace
}  // namespace stoker
