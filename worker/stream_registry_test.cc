// The stream registry: admission, what an open is refused for (exact codes), job contexts
// loaded once and evicted with their streams, and the traffic of closed streams kept.

#include "worker/stream_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <tuple>

#include "absl/synchronization/notification.h"
#include "common/ids.h"
#include "coordinator/status_matchers_for_test.h"
#include "worker/fake_coordinator_for_test.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using worker_testing::FakeCoordinator;
using worker_testing::kBatchBytes;
using worker_testing::kJob;
using worker_testing::RecordingSink;

WorkerConfig RegistryConfig() {
  WorkerConfig config;
  config.threads = 1;
  config.max_streams = 2;
  config.memory_bytes = 8 * kBatchBytes;
  return config;
}

pb::OpenStream OpenOf(uint64_t job_id) {
  pb::OpenStream open;
  open.set_job_id(job_id);
  open.set_client_id("c");
  return open;
}

class StreamRegistryTest : public ::testing::Test {
 protected:
  explicit StreamRegistryTest(WorkerConfig config = RegistryConfig())
      : registry_(std::make_unique<StreamRegistry>(config, &coordinator_, &pool_, &buffers_,
                                                   DatasetIo::FromEnvironment(), [] {})) {}

  // Opens a session and waits for the opener thread's answer.
  absl::StatusOr<std::shared_ptr<StreamSession>> Open(const pb::OpenStream& open,
                                                      const TenantScope& caller = {}) {
    absl::Notification opened;
    absl::StatusOr<std::shared_ptr<StreamSession>> result;
    registry_->OpenAsync(
        open, &sink_,
        [&](absl::StatusOr<std::shared_ptr<StreamSession>> s) {
          result = std::move(s);
          opened.Notify();
        },
        caller);
    opened.WaitForNotification();
    return result;
  }

  FakeCoordinator coordinator_;
  MessagePool pool_{2};
  PayloadBufferPool buffers_{2};
  RecordingSink sink_;
  std::unique_ptr<StreamRegistry> registry_;
};

TEST_F(StreamRegistryTest, AdmitsUpToMaxStreams) {
  EXPECT_THAT(registry_->Admit(), IsOk());
  EXPECT_THAT(registry_->Admit(), IsOk());
  EXPECT_THAT(registry_->Admit(),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("--max-streams=2")));
  registry_->Release();
  EXPECT_THAT(registry_->Admit(), IsOk());
}

TEST_F(StreamRegistryTest, OpensLoadTheJobOnceAndClosedStreamsAreForgotten) {
  absl::StatusOr<std::shared_ptr<StreamSession>> a = Open(OpenOf(kJob));
  absl::StatusOr<std::shared_ptr<StreamSession>> b = Open(OpenOf(kJob));
  ASSERT_THAT(a.status(), IsOk());
  ASSERT_THAT(b.status(), IsOk());
  EXPECT_EQ(coordinator_.get_jobs(), 1);
  EXPECT_EQ((*a)->job(), (*b)->job());
  EXPECT_EQ(registry_->open_sessions(), 2u);
  EXPECT_THAT(registry_->job_ids(), ElementsAre(kJob));
  registry_->Forget(*a);
  EXPECT_THAT(registry_->sessions(), ElementsAre(*b));
  EXPECT_EQ(registry_->traffic().queued_bytes, 0u);
}

TEST_F(StreamRegistryTest, AnOpenOfAnUnknownJobIsNotFound) {
  EXPECT_THAT(Open(OpenOf(kJob + 1)).status(),
              StatusIs(absl::StatusCode::kNotFound, std::string(JobNotFound(kJob + 1).message())));
}

TEST_F(StreamRegistryTest, AnOpenOfAnotherTenantsJobIsNotFoundInTheSameWords) {
  // The fake coordinator's job is the default tenant's.
  EXPECT_THAT(Open(OpenOf(kJob), TenantScope::Only("b")).status(),
              StatusIs(absl::StatusCode::kNotFound, std::string(JobNotFound(kJob).message())));
  EXPECT_EQ(registry_->open_sessions(), 0u);
  EXPECT_THAT(Open(OpenOf(kJob), TenantScope::Only("default")).status(), IsOk());
}

TEST_F(StreamRegistryTest, AnOpenOfARankOutsideTheWorldSizeIsInvalidArgument) {
  pb::OpenStream open = OpenOf(kJob);
  open.set_rank(1);
  EXPECT_THAT(Open(open).status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("rank: must be < world_size (1), got 1")));
}

TEST_F(StreamRegistryTest, AnOpenWithABadCompressionIsInvalidArgumentNamingTheField) {
  for (const auto& [codec, level, field] :
       {std::tuple{pb::COMPRESSION_ZSTD, 42, "open.compression.level"},
        std::tuple{static_cast<pb::Compression>(9), 0, "open.compression.codec"}}) {
    pb::OpenStream open = OpenOf(kJob);
    open.mutable_compression()->set_codec(codec);
    open.mutable_compression()->set_level(level);
    EXPECT_THAT(Open(open).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(field)));
  }
}

TEST_F(StreamRegistryTest, DrainingRefusesOpensAndLeasesForNone) {
  ASSERT_THAT(Open(OpenOf(kJob)).status(), IsOk());
  EXPECT_EQ(registry_->LeasingSessions().size(), 1u);
  registry_->BeginDrain();
  EXPECT_THAT(registry_->LeasingSessions(), IsEmpty());
  EXPECT_EQ(registry_->open_sessions(), 1u);  // open streams go on
  EXPECT_THAT(Open(OpenOf(kJob)).status(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("worker draining")));
}

TEST_F(StreamRegistryTest, AfterStopOpensAreUnavailable) {
  registry_->Stop();
  EXPECT_THAT(Open(OpenOf(kJob)).status(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("worker is stopping")));
}

TEST_F(StreamRegistryTest, ARetiredJobIsDroppedWithItsStreams) {
  absl::StatusOr<std::shared_ptr<StreamSession>> session = Open(OpenOf(kJob));
  ASSERT_THAT(session.status(), IsOk());
  google::protobuf::RepeatedField<uint64_t> retired;
  retired.Add(kJob + 1);  // not held: nothing happens
  EXPECT_THAT(registry_->EvictJobs(retired), IsEmpty());
  retired.Add(kJob);
  EXPECT_THAT(registry_->EvictJobs(retired), ElementsAre(*session));
  EXPECT_TRUE((*session)->job()->retired());
  EXPECT_THAT(registry_->job_ids(), IsEmpty());
}

TEST_F(StreamRegistryTest, TraceWindowsSetTheSamplingOfTheJobsHeld) {
  absl::StatusOr<std::shared_ptr<StreamSession>> session = Open(OpenOf(kJob));
  ASSERT_THAT(session.status(), IsOk());
  pb::WorkerHeartbeatResponse response;
  (*response.mutable_trace())[kJob].set_sample_one_in(4);
  registry_->SetTraceSampling(response.trace());
  EXPECT_EQ((*session)->job()->trace().sampling(), 4u);
  registry_->SetTraceSampling(pb::WorkerHeartbeatResponse().trace());  // the window ended
  EXPECT_EQ((*session)->job()->trace().sampling(), 0u);
}

class SmallMemoryStreamRegistryTest : public StreamRegistryTest {
 protected:
  static WorkerConfig SmallMemory() {
    WorkerConfig config = RegistryConfig();
    config.memory_bytes = 3 * kBatchBytes - 1;  // one thread holds 3 batches at least
    return config;
  }
  SmallMemoryStreamRegistryTest() : StreamRegistryTest(SmallMemory()) {}
};

TEST_F(SmallMemoryStreamRegistryTest, AJobWhoseBatchesTheMemoryCannotHoldIsResourceExhausted) {
  EXPECT_THAT(Open(OpenOf(kJob)).status(),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("--memory-bytes")));
}

// 6 batches of memory would hold the job's 3, but half of it is the decoded cache's.
class DecodedCacheShareStreamRegistryTest : public StreamRegistryTest {
 protected:
  static WorkerConfig CacheTakesHalf() {
    WorkerConfig config = RegistryConfig();
    config.memory_bytes = 6 * kBatchBytes - 2;
    config.decoded_cache_bytes = 3 * kBatchBytes;
    return config;
  }
  DecodedCacheShareStreamRegistryTest() : StreamRegistryTest(CacheTakesHalf()) {}
};

TEST_F(DecodedCacheShareStreamRegistryTest, TheDecodedCacheIsCountedInTheMemoryBudget) {
  EXPECT_THAT(Open(OpenOf(kJob)).status(),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("bytes (--memory-bytes, less --decoded-cache-bytes)")));
}

}  // namespace
}  // namespace stoker
