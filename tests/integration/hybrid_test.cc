// Hybrid mode (trainer_client/hybrid/hybrid_producer.h): each trainer's own threads produce for
// it alone, through the same protocol as remote workers.

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/drain_loader.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/hybrid/hybrid_producer.h"
#include "trainer_client/loader.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

pb::JobSpec SmallJob(uint32_t world_size) {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(64);
  synthetic->set_height(16);
  synthetic->set_width(12);
  synthetic->set_channels(3);
  synthetic->set_num_classes(10);
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  spec.mutable_pipeline()->add_ops()->mutable_gaussian_blur()->set_ksize(3);
  spec.set_batch_size(8);
  spec.set_seed(7);
  spec.set_shuffle(pb::SHUFFLE_MODE_GLOBAL);
  spec.set_world_size(world_size);
  spec.set_epochs(2);
  spec.set_drop_last(true);
  return spec;
}

struct RankResult {
  absl::Status status;
  std::map<uint32_t, std::vector<uint64_t>> samples_by_epoch;
  std::set<std::string> worker_addresses;  // workers this rank received batches from
  std::string local_address;
};

// Rank `rank` with its own HybridProducer (2 threads) and no remote worker: every batch of both
// epochs, and where they came from.
RankResult RunRank(const std::string& coordinator, const pb::JobSpec& spec, uint32_t rank) {
  RankResult result;
  LoaderOptions options;
  options.coordinator_address = coordinator;
  options.job_name = "hybrid";
  options.spec = spec;
  options.rank = rank;
  options.client_id = "trainer-" + std::to_string(rank);
  options.tls = TlsConfig::Plaintext();
  options.heartbeat_interval = absl::Milliseconds(50);
  absl::StatusOr<std::unique_ptr<HybridProducer>> local = HybridProducer::Start(
      coordinator, options.client_id, 2, TlsConfig::Plaintext(), DatasetIo::FromEnvironment());
  if (!local.ok()) {
    result.status = local.status();
    return result;
  }
  result.local_address = (*local)->address();
  absl::StatusOr<std::unique_ptr<Loader>> loader = Loader::Open(options);
  if (!loader.ok()) {
    result.status = loader.status();
    return result;
  }
  result.status = DrainLoader(**loader, [&](Batch& batch) {
    auto samples = batch.sample_indices();
    auto& epoch = result.samples_by_epoch[batch.epoch()];
    epoch.insert(epoch.end(), samples.begin(), samples.end());
    return absl::OkStatus();
  });
  if (!result.status.ok()) return result;
  for (const WorkerReceiveStats& worker : (*loader)->stats().workers) {
    if (worker.batches > 0) result.worker_addresses.insert(worker.address);
  }
  return result;
}

TEST(HybridTest, TrainersWithOnlyTheirOwnThreadsGetEverySampleOnceFromTheirOwnProducer) {
  TestClusterOptions cluster_options;
  cluster_options.workers = 0;
  cluster_options.insecure = true;  // Hybrid mode runs only without TLS (docs/security.md).
  absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start(cluster_options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const pb::JobSpec spec = SmallJob(2);
  RankResult results[2];
  std::vector<std::thread> ranks;
  for (uint32_t rank = 0; rank < 2; ++rank) {
    ranks.emplace_back(
        [&, rank] { results[rank] = RunRank((*cluster)->coordinator_address(), spec, rank); });
  }
  for (std::thread& thread : ranks) thread.join();

  std::map<uint32_t, std::multiset<uint64_t>> delivered;
  for (const RankResult& result : results) {
    ASSERT_TRUE(result.status.ok()) << result.status;
    // Each rank streamed from its own producer only: the other one was never listed to it.
    EXPECT_THAT(result.worker_addresses, ElementsAre(result.local_address));
    for (const auto& [epoch, samples] : result.samples_by_epoch) {
      delivered[epoch].insert(samples.begin(), samples.end());
    }
  }
  ASSERT_EQ(delivered.size(), 2u);
  for (const auto& [epoch, samples] : delivered) {
    std::multiset<uint64_t> expected;
    for (uint64_t s = 0; s < 64; ++s) expected.insert(s);
    EXPECT_EQ(samples, expected) << "epoch " << epoch;
  }
}

TEST(HybridTest, StartRejectsBadArguments) {
  EXPECT_THAT(HybridProducer::Start("127.0.0.1:1", "", 1, TlsConfig::Plaintext(),
                                    DatasetIo::FromEnvironment())
                  .status()
                  .message(),
              HasSubstr("client_id"));
  EXPECT_EQ(HybridProducer::Start("127.0.0.1:1", "", 1, TlsConfig::Plaintext(),
                                  DatasetIo::FromEnvironment())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HybridProducer::Start("127.0.0.1:1", "c", 0, TlsConfig::Plaintext(),
                                  DatasetIo::FromEnvironment())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stoker
