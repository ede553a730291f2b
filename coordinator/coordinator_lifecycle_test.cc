// A job's life outside the RPCs (issue 16): replay never opens a dataset; a job whose data is
// gone is recovered and its clients are told; format-1 journals are upgraded or refused by name;
// ids of a lost state are refused; idle jobs are retired and workers told.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "augment/pipeline_text.h"
#include "common/clock.h"
#include "common/ids.h"
#include "coordinator/coordinator.h"
#include "coordinator/coordinator_for_test.h"
#include "coordinator/journal.h"
#include "coordinator/probe_retire_scheduler.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"
#include "data/testing/shard_fixtures.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A SourceFactory standing for a dataset server: opens nothing while `down`, counts its calls.
struct FakeDataServer {
  std::atomic<bool> down{false};
  std::atomic<int> calls{0};

  SourceFactory Factory() {
    return [this](const pb::DatasetSpec& spec,
                  uint64_t seed) -> absl::StatusOr<std::unique_ptr<Source>> {
      ++calls;
      if (down) return absl::UnavailableError("dataset server is down");
      return CreateSource(spec, seed, DatasetIo::FromEnvironment());
    };
  }
};

pb::OpenJobRequest Open(const std::string& name, const pb::JobSpec& spec) {
  pb::OpenJobRequest request;
  request.set_name(name);
  *request.mutable_spec() = spec;
  return request;
}

pb::ClientHeartbeatRequest ClientBeat(uint64_t job_id) {
  pb::ClientHeartbeatRequest request;
  request.set_job_id(job_id);
  request.set_client_id("client");
  return request;
}

class CoordinatorLifecycleTest : public ::testing::Test {
 protected:
  // Opens `spec` as "job", registers a worker, leases and completes a task, all journaled.
  uint64_t RunSomeOfJob(const pb::JobSpec& spec) {
    FileJournal journal(path_);
    Coordinator coordinator(config_, &clock_, &journal, TestSourceFactory());
    EXPECT_THAT(coordinator.Recover(), IsOk());
    auto job = coordinator.OpenJob(Open("job", spec));
    EXPECT_THAT(job, IsOk());
    const uint64_t worker = RegisterTestWorker(coordinator, "w:1", 2);
    pb::LeaseTasksRequest lease;
    lease.set_worker_id(worker);
    lease.set_job_id(job->job_id());
    lease.set_max_tasks(2);
    auto leased = coordinator.LeaseTasks(lease);
    EXPECT_THAT(leased, IsOk());
    pb::ClientHeartbeatRequest beat = ClientBeat(job->job_id());
    *beat.add_received() = leased->leases(0).task();
    EXPECT_THAT(coordinator.ClientHeartbeat(beat), IsOk());
    return job->job_id();
  }

  testing::TempDir dir_;
  const std::string path_ = dir_.File("journal");
  FakeClock clock_{absl::FromUnixSeconds(1000)};
  CoordinatorConfig config_ = TestCoordinatorConfig();
};

TEST_F(CoordinatorLifecycleTest, ReplayOpensNoDatasetAndTheProbeTellsTheClients) {
  const uint64_t job_id = RunSomeOfJob(SmallJobSpec(/*world_size=*/1));
  FakeDataServer server;
  server.down = true;  // every call of the factory fails
  FileJournal journal(path_);
  Coordinator coordinator(config_, &clock_, &journal, server.Factory());
  ASSERT_THAT(coordinator.Recover(), IsOk());
  EXPECT_EQ(server.calls, 0);  // Apply (create_job, register, complete, restore) opened nothing
  coordinator.InspectState([&](const ClusterState& state) {
    EXPECT_EQ(state.RankSummary(job_id, 0).done_watermark, 1u);
  });
  // Reopening the job by name reads the journaled geometry, not the dataset.
  auto reopened = coordinator.OpenJob(Open("job", SmallJobSpec(1)));
  ASSERT_THAT(reopened, IsOk());
  EXPECT_EQ(reopened->batches_per_epoch_per_rank(), 10u);
  EXPECT_EQ(server.calls, 0);

  coordinator.ProbeDatasets();
  EXPECT_EQ(server.calls, 1);
  auto beat = coordinator.ClientHeartbeat(ClientBeat(job_id));
  ASSERT_THAT(beat, IsOk());
  EXPECT_THAT(beat->data_error(), HasSubstr("dataset server is down"));
  EXPECT_EQ(beat->state(), pb::JOB_STATE_RUNNING);

  coordinator.ProbeDatasets();  // not due yet
  EXPECT_EQ(server.calls, 1);
  server.down = false;
  clock_.Advance(ProbeRetireScheduler::kProbeInterval);
  coordinator.ProbeDatasets();
  EXPECT_EQ(server.calls, 2);
  beat = coordinator.ClientHeartbeat(ClientBeat(job_id));
  ASSERT_THAT(beat, IsOk());
  EXPECT_THAT(beat->data_error(), IsEmpty());
  clock_.Advance(ProbeRetireScheduler::kProbeInterval);
  coordinator.ProbeDatasets();  // probed successfully once: never again
  EXPECT_EQ(server.calls, 2);
}

TEST_F(CoordinatorLifecycleTest, JobWhoseShardsWereRemovedIsRecoveredAndReportsIt) {
  testing::TempDir data;
  pb::JobSpec spec = SmallJobSpec(/*world_size=*/1);
  spec.mutable_dataset()->mutable_shards()->set_manifest(
      testing::WriteTestDataset(data.path(), 2, 20));
  auto pipeline = ParsePipelineText("decode, resize(height=8, width=8), to_float");
  ASSERT_THAT(pipeline.status(), IsOk());
  *spec.mutable_pipeline() = *pipeline;
  const uint64_t job_id = RunSomeOfJob(spec);
  std::filesystem::remove_all(data.path());  // the dataset folder is moved away

  FileJournal journal(path_);
  Coordinator coordinator(config_, &clock_, &journal, TestSourceFactory());
  ASSERT_THAT(coordinator.Recover(), IsOk());
  const uint64_t other = RegisterTestWorker(coordinator, "w:2", 1);  // it serves
  EXPECT_NE(other, 0u);
  coordinator.ProbeDatasets();
  auto beat = coordinator.ClientHeartbeat(ClientBeat(job_id));
  ASSERT_THAT(beat, IsOk());
  EXPECT_THAT(beat->data_error(), HasSubstr("manifest"));
}

TEST_F(CoordinatorLifecycleTest, ADatasetThatChangedSizeIsReported) {
  const uint64_t job_id = RunSomeOfJob(SmallJobSpec(1));
  FileJournal journal(path_);
  Coordinator coordinator(config_, &clock_, &journal, [](const pb::DatasetSpec& spec, uint64_t) {
    pb::DatasetSpec bigger = spec;
    bigger.mutable_synthetic()->set_num_samples(80);
    return CreateSource(bigger, 0, DatasetIo::FromEnvironment());
  });
  ASSERT_THAT(coordinator.Recover(), IsOk());
  coordinator.ProbeDatasets();
  auto beat = coordinator.ClientHeartbeat(ClientBeat(job_id));
  ASSERT_THAT(beat, IsOk());
  EXPECT_THAT(beat->data_error(), HasSubstr("changed since the job was opened (40 samples"));
}

// A journal as a format-1 coordinator wrote it: create_job without its geometry.
void WriteFormat1Journal(const std::string& path) {
  pb::StateUpdate create;
  create.mutable_create_job()->set_job_id(1);
  create.mutable_create_job()->set_name("old");
  *create.mutable_create_job()->mutable_spec() = SmallJobSpec(1);
  testing::WriteFile(path, std::string("STKJRNL1") + FileJournal::Frame(create));
}

TEST_F(CoordinatorLifecycleTest, Format1JournalIsUpgradedWhenItsDatasetOpens) {
  WriteFormat1Journal(path_);
  {
    FileJournal journal(path_);
    Coordinator coordinator(config_, &clock_, &journal, TestSourceFactory());
    ASSERT_THAT(coordinator.Recover(), IsOk());
    coordinator.InspectState([](const ClusterState& state) {
      ASSERT_NE(state.FindJob(1), nullptr);
      EXPECT_EQ(state.FindJob(1)->geometry.batches_per_rank, 10u);
    });
  }
  EXPECT_EQ(testing::ReadFile(path_).substr(0, 8), "STKJRNL2");  // rewritten in format 2
  FakeDataServer server;
  server.down = true;
  FileJournal journal(path_);
  Coordinator coordinator(config_, &clock_, &journal, server.Factory());
  EXPECT_THAT(coordinator.Recover(), IsOk());
  EXPECT_EQ(server.calls, 0);
  // Its job keeps id 1 (incarnation 0, before incarnations) and is served; new ids carry the
  // incarnation the upgrade started.
  EXPECT_THAT(coordinator.ClientHeartbeat(ClientBeat(1)), IsOk());
  server.down = false;
  auto fresh = coordinator.OpenJob(Open("new", SmallJobSpec(1)));
  ASSERT_THAT(fresh, IsOk());
  EXPECT_NE(IncarnationOf(fresh->job_id()), 0u);
  EXPECT_EQ(SerialOf(fresh->job_id()), 1u);
}

TEST_F(CoordinatorLifecycleTest, Format1JournalWithItsDatasetGoneIsAClearError) {
  WriteFormat1Journal(path_);
  FakeDataServer server;
  server.down = true;
  FileJournal journal(path_);
  Coordinator coordinator(config_, &clock_, &journal, server.Factory());
  EXPECT_THAT(coordinator.Recover(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("journal record 0 (job 1 'old') is of journal format 1")));
}

TEST_F(CoordinatorLifecycleTest, AJournalOfANewerFormatIsRefusedNamingTheVersion) {
  testing::WriteFile(path_, "STKJRNL7");
  FileJournal journal(path_);
  EXPECT_THAT(journal.Load(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("format version '7'")));
}

TEST_F(CoordinatorLifecycleTest, AJournaledRestartKeepsTheIncarnation) {
  const uint64_t job_id = RunSomeOfJob(SmallJobSpec(1));
  FileJournal journal(path_);
  Coordinator coordinator(config_, &clock_, &journal, TestSourceFactory());
  ASSERT_THAT(coordinator.Recover(), IsOk());
  EXPECT_THAT(coordinator.ClientHeartbeat(ClientBeat(job_id)), IsOk());
  auto second = coordinator.OpenJob(Open("second", SmallJobSpec(1)));
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(second->job_id(), job_id + 1);
}

// Issue 16: a coordinator restarted without a journal is another incarnation; the reports of a
// worker (and a client) of the old one are refused, never applied to the new job that has the
// same short id.
TEST(CoordinatorIncarnationTest, AStaleWorkersReportsToARestartedCoordinatorAreRefused) {
  FakeClock clock;
  const CoordinatorConfig config = TestCoordinatorConfig();
  auto old_one = std::make_unique<Coordinator>(config, &clock, nullptr, TestSourceFactory());
  auto old_job = old_one->OpenJob(Open("job", SmallJobSpec(1)));
  ASSERT_THAT(old_job, IsOk());
  const uint64_t old_worker = RegisterTestWorker(*old_one, "w:1", 1);
  pb::LeaseTasksRequest lease;
  lease.set_worker_id(old_worker);
  lease.set_job_id(old_job->job_id());
  lease.set_max_tasks(4);
  auto leased = old_one->LeaseTasks(lease);
  ASSERT_THAT(leased, IsOk());
  old_one.reset();  // the coordinator dies with its state

  Coordinator restarted(config, &clock, nullptr, TestSourceFactory());
  auto job = restarted.OpenJob(Open("job", SmallJobSpec(1)));
  ASSERT_THAT(job, IsOk());
  const uint64_t worker = RegisterTestWorker(restarted, "w:2", 1);
  EXPECT_EQ(SerialOf(job->job_id()), SerialOf(old_job->job_id()));  // same short forms...
  EXPECT_EQ(SerialOf(worker), SerialOf(old_worker));
  EXPECT_NE(job->job_id(), old_job->job_id());  // ...never the same ids
  lease.set_job_id(job->job_id());
  ASSERT_THAT(restarted.LeaseTasks(lease),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("is not of this coordinator's incarnation")));

  pb::WorkerHeartbeatRequest stale;
  stale.set_worker_id(old_worker);
  for (const pb::Lease& l : leased->leases()) *stale.add_delivered() = l.task();
  EXPECT_THAT(restarted.WorkerHeartbeat(stale),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("worker id")));
  lease.set_worker_id(worker);
  lease.set_job_id(old_job->job_id());
  EXPECT_THAT(restarted.LeaseTasks(lease),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("job id")));
  pb::ClientHeartbeatRequest client = ClientBeat(old_job->job_id());
  for (const pb::Lease& l : leased->leases()) *client.add_received() = l.task();
  EXPECT_THAT(restarted.ClientHeartbeat(client),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("job id")));
  pb::GetJobRequest get;
  get.set_job_id(old_job->job_id());
  EXPECT_THAT(restarted.GetJob(get),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("incarnation")));
  // Even delivered reports of the old job's tasks under the new worker's id touch nothing.
  stale.set_worker_id(worker);
  EXPECT_THAT(restarted.WorkerHeartbeat(stale), IsOk());
  restarted.InspectState([&](const ClusterState& state) {
    const RankProgressSummary summary = state.RankSummary(job->job_id(), 0);
    EXPECT_EQ(summary.done_watermark, 0u);
    EXPECT_EQ(summary.leased, 0u);
  });
  // An unknown id of this incarnation is plain NOT_FOUND.
  get.set_job_id(job->job_id() + 1);
  EXPECT_THAT(restarted.GetJob(get),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no such job")));
}

TEST_F(CoordinatorLifecycleTest, AnIdleJobIsRetiredDurablyAndWorkersAreTold) {
  config_.job_idle_timeout = absl::Seconds(60);
  config_.worker_timeout = absl::Seconds(45);  // the worker outlives the 20 s steps
  uint64_t idle_job = 0, live_job = 0;
  {
    FileJournal journal(path_);
    Coordinator coordinator(config_, &clock_, &journal, TestSourceFactory());
    ASSERT_THAT(coordinator.Recover(), IsOk());
    auto idle = coordinator.OpenJob(Open("idle", SmallJobSpec(1)));
    auto live = coordinator.OpenJob(Open("live", SmallJobSpec(1)));
    ASSERT_THAT(idle, IsOk());
    ASSERT_THAT(live, IsOk());
    idle_job = idle->job_id();
    live_job = live->job_id();
    const uint64_t worker = RegisterTestWorker(coordinator, "w:1", 1);
    pb::LeaseTasksRequest lease;
    lease.set_worker_id(worker);
    lease.set_job_id(idle_job);
    lease.set_max_tasks(2);
    ASSERT_THAT(coordinator.LeaseTasks(lease), IsOk());
    for (int i = 0; i < 4; ++i) {  // only "live" hears from its client
      clock_.Advance(absl::Seconds(20));
      ASSERT_THAT(coordinator.ClientHeartbeat(ClientBeat(live_job)), IsOk());
      pb::WorkerHeartbeatRequest beat;
      beat.set_worker_id(worker);
      beat.add_jobs(idle_job);
      beat.add_jobs(live_job);
      auto told = coordinator.WorkerHeartbeat(beat);
      ASSERT_THAT(told, IsOk());
      // Idle for 20 s, 40 s: kept; for 60 s (job_idle_timeout) and more: retired.
      if (i < 2) {
        EXPECT_THAT(told->retired_jobs(), IsEmpty()) << i;
      } else {
        EXPECT_THAT(told->retired_jobs(), ::testing::ElementsAre(idle_job)) << i;
      }
    }
    coordinator.InspectState([&](const ClusterState& state) {
      EXPECT_EQ(state.FindJob(idle_job), nullptr);
      EXPECT_EQ(state.FindJobByName("default", "idle"), nullptr);
      EXPECT_THAT(state.LeasesOf(worker), IsEmpty());
      EXPECT_FALSE(state.EarliestLeaseExpiry().has_value());
    });
    EXPECT_THAT(coordinator.ClientHeartbeat(ClientBeat(idle_job)),
                StatusIs(absl::StatusCode::kNotFound, HasSubstr("no such job")));
  }
  FileJournal journal(path_);  // the retirement was journaled
  Coordinator coordinator(config_, &clock_, &journal, TestSourceFactory());
  ASSERT_THAT(coordinator.Recover(), IsOk());
  coordinator.InspectState([&](const ClusterState& state) {
    EXPECT_EQ(state.FindJob(idle_job), nullptr);
    EXPECT_NE(state.FindJob(live_job), nullptr);
  });
  auto reopened = coordinator.OpenJob(Open("idle", SmallJobSpec(1)));  // a new job of that name
  ASSERT_THAT(reopened, IsOk());
  EXPECT_NE(reopened->job_id(), idle_job);
}

TEST_F(CoordinatorLifecycleTest, ATenantsQuotaCountsTheJobsItHadBeforeARestart) {
  TenantLimits limits;
  limits.max_jobs = 2;
  limits.max_ranks = 3;
  const auto policy = std::make_shared<const TenantPolicy>(
      std::map<std::string, TenantLimits>{{"a", limits}}, TenantLimits{});
  const TenantScope a = TenantScope::Only("a");
  {
    FileJournal journal(path_);
    Coordinator coordinator(config_, &clock_, &journal, TestSourceFactory());
    ASSERT_THAT(coordinator.Recover(), IsOk());
    coordinator.SetTenantPolicy(policy);
    ASSERT_THAT(coordinator.OpenJob(Open("one", SmallJobSpec(1)), a), IsOk());
    ASSERT_THAT(coordinator.OpenJob(Open("two", SmallJobSpec(2)), a), IsOk());
  }
  FileJournal journal(path_);
  Coordinator coordinator(config_, &clock_, &journal, TestSourceFactory());
  ASSERT_THAT(coordinator.Recover(), IsOk());
  coordinator.SetTenantPolicy(policy);
  coordinator.InspectState([](const ClusterState& state) {
    EXPECT_EQ(state.UsageOf("a").jobs, 2u);
    EXPECT_EQ(state.UsageOf("a").ranks, 3u);
  });
  EXPECT_THAT(coordinator.OpenJob(Open("three", SmallJobSpec(1)), a),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("tenant a: 2 jobs open, its quota (max_jobs")));
  EXPECT_THAT(coordinator.OpenJob(Open("two", SmallJobSpec(2)), a), IsOk());  // a reopen
}

TEST(CoordinatorConfigTest, JobIdleTimeoutMustBePositive) {
  CoordinatorConfig config = TestCoordinatorConfig();
  config.job_idle_timeout = absl::ZeroDuration();
  EXPECT_THAT(config.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("job_idle_timeout")));
}

}  // namespace
}  // namespace stoker
