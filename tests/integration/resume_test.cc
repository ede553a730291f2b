// Resume tokens end to end (issue 4): a trainer consumes part of a job, keeps its token, stops,
// and a new Loader opened with the token gets exactly the rest, in-process over real gRPC
// (TestCluster).

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stoker/v1/resume.pb.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::HasSubstr;

// What a test remembers of a delivered batch.
struct Got {
  uint32_t epoch;
  uint64_t batch;
  std::vector<uint64_t> samples;
  bool operator==(const Got& o) const {
    return std::tie(epoch, batch, samples) == std::tie(o.epoch, o.batch, o.samples);
  }
};

// 100 tiny images, batch 8: 13 global batches (the last wraps around), 2 epochs.
pb::JobSpec Spec(uint32_t world_size) {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(100);
  synthetic->set_height(4);
  synthetic->set_width(4);
  synthetic->set_channels(1);
  synthetic->set_num_classes(10);
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  spec.set_batch_size(8);
  spec.set_seed(11);
  spec.set_shuffle(pb::SHUFFLE_MODE_GLOBAL);
  spec.set_world_size(world_size);
  spec.set_epochs(2);
  spec.set_drop_last(false);
  return spec;
}

class ResumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = TestCluster::Start(/*workers=*/2);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }

  LoaderOptions Options(const std::string& job, uint32_t world_size, uint32_t rank, bool ordered,
                        std::vector<std::string> tokens = {}) {
    LoaderOptions options;
    options.coordinator_address = cluster_->coordinator_address();
    options.tls = cluster_->tls_for(Role::kTrainer);
    options.job_name = job;
    options.spec = Spec(world_size);
    options.rank = rank;
    options.ordered = ordered;
    options.resume_tokens = std::move(tokens);
    options.heartbeat_interval = absl::Milliseconds(50);
    options.prefetch_bytes = 3 * 8 * 16 * sizeof(float);  // 3 batches
    return options;
  }

  // Consumes up to `max` batches (all when 0) and returns them; `token` gets the token after.
  static std::vector<Got> Consume(Loader& loader, size_t max, std::string* token = nullptr) {
    std::vector<Got> got;
    while (max == 0 || got.size() < max) {
      absl::StatusOr<Batch> batch = loader.Next();
      if (batch.status().code() == absl::StatusCode::kOutOfRange) break;
      EXPECT_TRUE(batch.ok()) << batch.status();
      if (!batch.ok()) break;
      auto samples = batch->sample_indices();
      got.push_back(Got{batch->epoch(), batch->batch_index(),
                        std::vector<uint64_t>(samples.begin(), samples.end())});
    }
    if (token != nullptr) *token = loader.ResumeToken();
    return got;
  }

  std::vector<Got> Run(LoaderOptions options, size_t max, std::string* token = nullptr) {
    auto loader = Loader::Open(std::move(options));
    EXPECT_TRUE(loader.ok()) << loader.status();
    if (!loader.ok()) return {};
    std::vector<Got> got = Consume(**loader, max, token);
    (*loader)->Stop();
    return got;
  }

  std::unique_ptr<TestCluster> cluster_;
};

TEST_F(ResumeTest, OrderedResumeEqualsAnUninterruptedRun) {
  const std::vector<Got> full = Run(Options("full", 2, 1, /*ordered=*/true), 0);
  ASSERT_EQ(full.size(), 14u);  // 7 per epoch
  std::string token;
  std::vector<Got> resumed = Run(Options("part", 2, 1, true), 9, &token);
  ASSERT_EQ(resumed.size(), 9u);
  // Restart twice: once right away, once after 2 more batches.
  std::vector<Got> more = Run(Options("part", 2, 1, true, {token}), 2, &token);
  resumed.insert(resumed.end(), more.begin(), more.end());
  more = Run(Options("part", 2, 1, true, {token}), 0, &token);
  resumed.insert(resumed.end(), more.begin(), more.end());
  EXPECT_EQ(resumed, full);
  pb::ResumeToken last;
  ASSERT_TRUE(last.ParseFromString(token));
  EXPECT_EQ(last.epoch(), 2u);
}

TEST_F(ResumeTest, AnotherWorldSizeDeliversTheRestExactlyOnce) {
  std::string token0, token1;
  std::vector<Got> before = Run(Options("w2", 2, 0, false), 3, &token0);
  std::vector<Got> rank1 = Run(Options("w2", 2, 1, false), 1, &token1);
  before.insert(before.end(), rank1.begin(), rank1.end());
  // Epoch 0 had 14 batches; 4 consumed, 10 remain: 4 per rank over 3 ranks, 2 pads (14, 15).
  std::vector<Got> after;
  for (uint32_t rank = 0; rank < 3; ++rank) {
    std::vector<Got> got = Run(Options("w3", 3, rank, false, {token0, token1}), 0);
    EXPECT_EQ(got.size(), 4u + 5u) << "rank " << rank;  // epoch 1: 15 batches over 3 ranks
    after.insert(after.end(), got.begin(), got.end());
  }
  std::map<uint32_t, std::multiset<uint64_t>> batches;
  for (const std::vector<Got>* part : {&before, &after}) {
    for (const Got& got : *part) batches[got.epoch].insert(got.batch);
  }
  std::multiset<uint64_t> epoch0, epoch1;
  for (uint64_t g = 0; g < 16; ++g) epoch0.insert(g);
  for (uint64_t g = 0; g < 15; ++g) epoch1.insert(g);
  EXPECT_EQ(batches[0], epoch0);
  EXPECT_EQ(batches[1], epoch1);

  // A token of one rank does not do for another world size.
  auto loader = Loader::Open(Options("w3b", 3, 0, false, {token0}));
  EXPECT_EQ(loader.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(loader.status().message()),
              HasSubstr("needs the tokens of all 2 ranks, got 1"));
}

}  // namespace
}  // namespace stoker
