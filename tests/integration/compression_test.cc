// Per-stream payload compression through the whole path (TestCluster: coordinator and workers
// over real gRPC on loopback): jobs streamed with lz4, zstd and auto deliver every batch exactly
// once with the bytes of an uncompressed run; a worker that offers no compression serves a client
// that asks for it with raw payloads; the workers' metrics count raw and wire bytes by codec.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"
#include "trainer_client/loader_env.h"
#include "worker/worker.h"
#include "worker/worker_server.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

constexpr int kEpochs = 2;
constexpr uint64_t kBatchesPerEpoch = 6;

// Flipped and cropped synthetic images, uint8 HWC: what a JPEG pipeline ships.
pb::JobSpec Uint8Job() {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(48);
  synthetic->set_height(24);
  synthetic->set_width(20);
  synthetic->set_channels(3);
  synthetic->set_num_classes(10);
  spec.mutable_pipeline()->add_ops()->mutable_horizontal_flip();
  spec.mutable_pipeline()->set_output_dtype(pb::DTYPE_UINT8);
  spec.mutable_pipeline()->set_output_layout(pb::LAYOUT_HWC);
  spec.set_batch_size(8);
  spec.set_seed(11);
  spec.set_shuffle(pb::SHUFFLE_MODE_GLOBAL);
  spec.set_world_size(1);
  spec.set_epochs(kEpochs);
  spec.set_drop_last(true);
  return spec;
}

struct Delivery {
  // By (epoch, batch index); a second delivery of a batch is a test failure.
  std::map<std::pair<uint32_t, uint64_t>, std::string> payloads;
  LoaderStats stats;
};

// Streams job `name` with `compression` from every worker, or only from `only_worker`.
absl::StatusOr<Delivery> ConsumeJob(const TestCluster& cluster, const std::string& name,
                                    const std::string& compression,
                                    const std::string& only_worker = "") {
  LoaderOptions options;
  if (!only_worker.empty()) options.only_workers = {only_worker};
  options.coordinator_address = cluster.coordinator_address();
  options.tls = cluster.tls_for(Role::kTrainer);
  options.job_name = name;
  options.spec = Uint8Job();
  options.heartbeat_interval = absl::Milliseconds(50);
  options.compression = compression;
  absl::StatusOr<std::unique_ptr<Loader>> loader = Loader::Open(std::move(options), LoaderEnv());
  if (!loader.ok()) return loader.status();
  Delivery run;
  while (true) {
    absl::StatusOr<Batch> batch = (*loader)->Next();
    if (batch.status().code() == absl::StatusCode::kOutOfRange) break;
    if (!batch.ok()) return batch.status();
    auto bytes = batch->bytes();
    const bool inserted =
        run.payloads
            .emplace(std::make_pair(batch->epoch(), batch->batch_index()),
                     std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()))
            .second;
    EXPECT_TRUE(inserted) << "batch " << batch->batch_index() << " of epoch " << batch->epoch()
                          << " delivered twice";
  }
  run.stats = (*loader)->stats();
  return run;
}

uint64_t Sum(const LoaderStats& stats, uint64_t WorkerReceiveStats::*field) {
  uint64_t total = 0;
  for (const WorkerReceiveStats& worker : stats.workers) total += worker.*field;
  return total;
}

class CompressionTest : public ::testing::Test {
 protected:
  // Worker 0 offers what `first_offers` says, the others the default (lz4, zstd).
  void StartCluster(const std::string& first_offers) {
    TestClusterOptions options;
    options.workers = 2;
    options.configure_worker = [first_offers](size_t index, WorkerConfig* config) {
      if (index == 0) config->offered_compression = first_offers;
    };
    absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    absl::StatusOr<Delivery> reference = ConsumeJob(*cluster_, "raw", "none");
    ASSERT_TRUE(reference.ok()) << reference.status();
    reference_ = *std::move(reference);
    ASSERT_EQ(reference_.payloads.size(), kEpochs * kBatchesPerEpoch);
    ASSERT_EQ(Sum(reference_.stats, &WorkerReceiveStats::wire_bytes),
              Sum(reference_.stats, &WorkerReceiveStats::bytes));
  }

  // Payload bytes the workers handed to streams with `codec`, raw and on the wire.
  PayloadBytes WorkerBytes(size_t worker, const std::string& codec) {
    const StreamTraffic traffic = cluster_->worker(worker)->worker()->traffic();
    auto it = traffic.payload_bytes_total.find(codec);
    return it == traffic.payload_bytes_total.end() ? PayloadBytes{} : it->second;
  }

  std::unique_ptr<TestCluster> cluster_;
  Delivery reference_;
};

TEST_F(CompressionTest, Lz4AndZstdDeliverExactlyOnceTheBytesOfARawRun) {
  ASSERT_NO_FATAL_FAILURE(StartCluster("lz4,zstd"));
  for (const char* compression : {"lz4", "zstd:3"}) {
    absl::StatusOr<Delivery> run = ConsumeJob(*cluster_, compression, compression);
    ASSERT_TRUE(run.ok()) << compression << ": " << run.status();
    EXPECT_EQ(run->payloads, reference_.payloads) << compression;
    EXPECT_EQ(run->stats.corrupt_payloads, 0u);
    const uint64_t raw = Sum(run->stats, &WorkerReceiveStats::bytes);
    EXPECT_EQ(raw, Sum(reference_.stats, &WorkerReceiveStats::bytes)) << compression;
    // Every payload came as a frame: never the raw byte count (frames add headers and checksums
    // to what they cannot shrink).
    for (const WorkerReceiveStats& worker : run->stats.workers) {
      EXPECT_NE(worker.wire_bytes, worker.bytes) << compression << " worker " << worker.worker_id;
    }
  }
  for (const char* codec : {"lz4", "zstd"}) {
    const PayloadBytes bytes{WorkerBytes(0, codec).raw + WorkerBytes(1, codec).raw,
                             WorkerBytes(0, codec).wire + WorkerBytes(1, codec).wire};
    EXPECT_GT(bytes.raw, 0u) << codec;
    EXPECT_NE(bytes.wire, bytes.raw) << codec;
  }
}

TEST_F(CompressionTest, AWorkerOfferingNoCompressionSendsRawToAClientAskingForIt) {
  ASSERT_NO_FATAL_FAILURE(StartCluster("none"));
  // Only from worker 0, which offers nothing: every payload raw, the same bytes.
  absl::StatusOr<Delivery> run =
      ConsumeJob(*cluster_, "lz4-from-0", "lz4", cluster_->worker(0)->address());
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->payloads, reference_.payloads);
  ASSERT_EQ(run->stats.workers.size(), 1u);
  EXPECT_EQ(run->stats.workers[0].worker_id, cluster_->worker(0)->worker()->worker_id());
  EXPECT_EQ(run->stats.workers[0].wire_bytes, run->stats.workers[0].bytes);
  EXPECT_EQ(WorkerBytes(0, "lz4").raw, 0u);
  EXPECT_GT(WorkerBytes(0, "none").raw, 0u);
  // From both: worker 1 compresses, worker 0 still sends raw; the bytes are the same.
  absl::StatusOr<Delivery> mixed = ConsumeJob(*cluster_, "lz4-mixed", "lz4");
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_EQ(mixed->payloads, reference_.payloads);
  EXPECT_EQ(WorkerBytes(0, "lz4").raw, 0u);
}

TEST_F(CompressionTest, AutoDeliversExactlyOnceTheBytesOfARawRun) {
  ASSERT_NO_FATAL_FAILURE(StartCluster("lz4,zstd"));
  // Which codec auto settles on depends on measured rates (not asserted: no timing in tests);
  // whatever it picks, the batches are the raw run's.
  absl::StatusOr<Delivery> run = ConsumeJob(*cluster_, "auto", "auto");
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->payloads, reference_.payloads);
  EXPECT_EQ(run->stats.corrupt_payloads, 0u);
}

}  // namespace
}  // namespace stoker
