// The coordinator's limits on what a caller can make it hold (docs/security.md, "Limits"):
// each refusal has its exact code and names its flag, one test per flag.

#include <string>
#include <utility>

#include "common/clock.h"
#include "coordinator/coordinator.h"
#include "coordinator/coordinator_for_test.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plan/resume_plan.h"
#include "plan/resume_token.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

stoker::v1::OpenJobRequest Request(const std::string& name) {
  stoker::v1::OpenJobRequest request;
  request.set_name(name);
  *request.mutable_spec() = SmallJobSpec();
  return request;
}

TEST(CoordinatorLimitsTest, JobsBeyondMaxJobsAreResourceExhausted) {
  FakeClock clock;
  CoordinatorConfig config = TestCoordinatorConfig();
  config.max_jobs = 2;
  Coordinator coordinator(config, &clock, nullptr, TestSourceFactory());
  EXPECT_THAT(coordinator.OpenJob(Request("a")), IsOk());
  EXPECT_THAT(coordinator.OpenJob(Request("b")), IsOk());
  EXPECT_THAT(coordinator.OpenJob(Request("c")),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("--max-jobs=2")));
  // Reopening a held job is no new job.
  EXPECT_THAT(coordinator.OpenJob(Request("a")), IsOk());
}

TEST(CoordinatorLimitsTest, LongNamesAndPipelinesAreInvalidArgument) {
  FakeClock clock;
  CoordinatorConfig config = TestCoordinatorConfig();
  config.max_job_name_bytes = 8;
  config.max_pipeline_ops = 3;
  Coordinator coordinator(config, &clock, nullptr, TestSourceFactory());
  EXPECT_THAT(coordinator.OpenJob(Request("12345678")), IsOk());
  EXPECT_THAT(coordinator.OpenJob(Request("123456789")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("name: 9 bytes, over the limit of 8 (--max-job-name-bytes)")));
  stoker::v1::OpenJobRequest request = Request("ops");
  for (int i = 0; i < 3; ++i)
    request.mutable_spec()->mutable_pipeline()->add_ops()->mutable_horizontal_flip();
  EXPECT_THAT(
      coordinator.OpenJob(request),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("spec.pipeline.ops: 4 ops, over the limit of 3 (--max-pipeline-ops)")));
}

// A token of rank `rank` of a run of `spec` that never resumed, claiming `universe` batches.
std::string CraftedToken(const stoker::v1::JobSpec& spec, uint32_t rank, uint64_t universe) {
  stoker::v1::ResumeToken token;
  token.set_version(kResumeTokenVersion);
  token.set_job_name("crafted");
  token.set_spec_fingerprint(SpecFingerprint(spec));
  token.set_world_size(spec.world_size());
  token.set_rank(rank);
  token.set_universe(universe);
  return token.SerializeAsString();
}

// Issue 28: world_size 4,000,000,000 over a 1-sample dataset, with a same-world token whose
// universe is just under the epoch's limit (1.6e10), aborted the coordinator with
// std::bad_alloc. The world size is refused before anything is sized by it; with the world-size
// limit lifted, the universe is refused by --max-resume-batches before the deal is computed.
TEST(CoordinatorLimitsTest, HugeWorldWithACraftedTokenIsInvalidArgument) {
  stoker::v1::OpenJobRequest request = Request("huge-world");
  request.mutable_spec()->mutable_dataset()->mutable_synthetic()->set_num_samples(1);
  request.mutable_spec()->set_batch_size(1);
  request.mutable_spec()->set_drop_last(false);
  request.mutable_spec()->set_world_size(4'000'000'000u);
  request.add_resume_tokens(CraftedToken(request.spec(), 0, 16'000'000'000u - 1));
  FakeClock clock;
  Coordinator coordinator(TestCoordinatorConfig(), &clock, nullptr, TestSourceFactory());
  EXPECT_THAT(coordinator.OpenJob(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.world_size: 4000000000, over the limit of 16384 "
                                 "(--max-world-size)")));
  CoordinatorConfig lifted = TestCoordinatorConfig();
  lifted.max_world_size = 4'000'000'000u;
  Coordinator permissive(lifted, &clock, nullptr, TestSourceFactory());
  EXPECT_THAT(permissive.OpenJob(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("universe 15999999999 is over the coordinator's limit of 4194304 "
                                 "batches per resumed epoch (--max-resume-batches)")));
}

TEST(CoordinatorLimitsTest, ResumeUniverseOverMaxResumeBatchesIsInvalidArgument) {
  FakeClock clock;
  CoordinatorConfig config = TestCoordinatorConfig();
  config.max_resume_batches = 8;
  Coordinator coordinator(config, &clock, nullptr, TestSourceFactory());
  stoker::v1::OpenJobRequest request = Request("resume");
  request.mutable_spec()->set_world_size(1);  // 40 samples, batch 4: 10 batches an epoch
  request.add_resume_tokens(CraftedToken(request.spec(), 0, 10));
  EXPECT_THAT(coordinator.OpenJob(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("resume_tokens[0]: universe 10 is over the coordinator's limit "
                                 "of 8 batches per resumed epoch (--max-resume-batches)")));
  request.mutable_resume_tokens()->Clear();
  request.add_resume_tokens(CraftedToken(request.spec(), 0, 8));
  EXPECT_THAT(coordinator.OpenJob(request), IsOk());
}

TEST(CoordinatorLimitsTest, TokensBeyondMaxWorldSizeAreInvalidArgument) {
  FakeClock clock;
  CoordinatorConfig config = TestCoordinatorConfig();
  config.max_world_size = 2;
  Coordinator coordinator(config, &clock, nullptr, TestSourceFactory());
  stoker::v1::OpenJobRequest request = Request("tokens");
  for (uint32_t rank = 0; rank < 3; ++rank) {
    request.add_resume_tokens(CraftedToken(request.spec(), rank, 10));
  }
  EXPECT_THAT(
      coordinator.OpenJob(request),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("resume_tokens: 3 tokens, over the limit of 2 (--max-world-size)")));
}

TEST(CoordinatorLimitsTest, EpochsOverMaxEpochsAreInvalidArgument) {
  FakeClock clock;
  CoordinatorConfig config = TestCoordinatorConfig();
  config.max_epochs = 3;
  Coordinator coordinator(config, &clock, nullptr, TestSourceFactory());
  stoker::v1::OpenJobRequest request = Request("epochs");
  request.mutable_spec()->set_epochs(3);
  EXPECT_THAT(coordinator.OpenJob(request), IsOk());
  request.set_name("epochs4");
  request.mutable_spec()->set_epochs(4);
  EXPECT_THAT(coordinator.OpenJob(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.epochs: 4, over the limit of 3 (--max-epochs)")));
}

TEST(CoordinatorLimitsTest, BatchSizeOverMaxBatchSizeIsInvalidArgument) {
  FakeClock clock;
  CoordinatorConfig config = TestCoordinatorConfig();
  config.max_batch_size = 4;
  Coordinator coordinator(config, &clock, nullptr, TestSourceFactory());
  stoker::v1::OpenJobRequest request = Request("batch");
  EXPECT_THAT(coordinator.OpenJob(request), IsOk());  // batch 4
  request.set_name("batch5");
  request.mutable_spec()->set_batch_size(5);
  EXPECT_THAT(coordinator.OpenJob(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.batch_size: 5, over the limit of 4 (--max-batch-size)")));
}

TEST(CoordinatorLimitsTest, LongIdsAreInvalidArgument) {
  FakeClock clock;
  CoordinatorConfig config = TestCoordinatorConfig();
  config.max_id_bytes = 8;
  Coordinator coordinator(config, &clock, nullptr, TestSourceFactory());
  stoker::v1::RegisterWorkerRequest worker;
  worker.set_address("host:123456");
  worker.set_cores(1);
  EXPECT_THAT(coordinator.RegisterWorker(worker),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("address: 11 bytes, over the limit of 8 (--max-id-bytes)")));
  worker.set_address("h:1");
  worker.set_hybrid_client_id("client-123");
  EXPECT_THAT(coordinator.RegisterWorker(worker),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hybrid_client_id: 10 bytes, over the limit of 8")));
  auto job = coordinator.OpenJob(Request("ids"));
  ASSERT_THAT(job, IsOk());
  stoker::v1::ClientHeartbeatRequest heartbeat;
  heartbeat.set_job_id(job->job_id());
  heartbeat.set_client_id("client-123");
  EXPECT_THAT(coordinator.ClientHeartbeat(heartbeat),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("client_id: 10 bytes, over the limit of 8 (--max-id-bytes)")));
  heartbeat.set_client_id("client");
  EXPECT_THAT(coordinator.ClientHeartbeat(heartbeat), IsOk());
}

TEST(CoordinatorLimitsTest, HeartbeatJobListsOverMaxJobsAreInvalidArgument) {
  FakeClock clock;
  CoordinatorConfig config = TestCoordinatorConfig();
  config.max_jobs = 2;
  Coordinator coordinator(config, &clock, nullptr, TestSourceFactory());
  stoker::v1::WorkerHeartbeatRequest heartbeat;
  heartbeat.set_worker_id(RegisterTestWorker(coordinator, "w:1", 1));
  for (uint64_t job = 1; job <= 3; ++job) heartbeat.add_jobs(job);
  EXPECT_THAT(coordinator.WorkerHeartbeat(heartbeat),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("jobs: 3 jobs, over the limit of 2 (--max-jobs)")));
  heartbeat.clear_jobs();
  for (uint64_t job = 1; job <= 3; ++job)
    heartbeat.mutable_stats()->add_job_rates()->set_job_id(job);
  EXPECT_THAT(coordinator.WorkerHeartbeat(heartbeat),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("stats.job_rates: 3 jobs, over the limit of 2 (--max-jobs)")));
  heartbeat.mutable_stats()->mutable_job_rates()->RemoveLast();
  EXPECT_THAT(coordinator.WorkerHeartbeat(heartbeat), IsOk());
}

TEST(CoordinatorLimitsTest, ConfigRefusesUnusableLimits) {
  const std::pair<const char*, void (*)(CoordinatorConfig&)> zeroed[] = {
      {"max_world_size", [](CoordinatorConfig& c) { c.max_world_size = 0; }},
      {"max_epochs", [](CoordinatorConfig& c) { c.max_epochs = 0; }},
      {"max_batch_size", [](CoordinatorConfig& c) { c.max_batch_size = 0; }},
      {"max_resume_batches", [](CoordinatorConfig& c) { c.max_resume_batches = 0; }},
      {"max_id_bytes", [](CoordinatorConfig& c) { c.max_id_bytes = 0; }},
      {"max_trace_seconds", [](CoordinatorConfig& c) { c.max_trace_seconds = 0; }},
      {"max_trace_spans", [](CoordinatorConfig& c) { c.max_trace_spans = 0; }},
  };
  for (const auto& [field, zero] : zeroed) {
    CoordinatorConfig config = TestCoordinatorConfig();
    zero(config);
    EXPECT_THAT(config.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr(std::string(field) + ": must be > 0")));
  }
  CoordinatorConfig config = TestCoordinatorConfig();
  config.max_resume_batches = kMaxResumeUniverse + 1;
  EXPECT_THAT(config.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("max_resume_batches: must be <= 8388608, got 8388609")));
  EXPECT_THAT(TestCoordinatorConfig().Validate(), IsOk());
}

}  // namespace
}  // namespace stoker
