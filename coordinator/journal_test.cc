#include "coordinator/journal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "coordinator/coordinator.h"
#include "coordinator/source_factory_for_test.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"
#include "plan/resume_plan.h"

namespace stoker {
namespace {

using stoker::v1::StateUpdate;
using ::testing::HasSubstr;
using ::testing::SizeIs;

// Every path TempPath handed out, removed when the test program ends.
std::vector<std::string>& TempPaths() {
  static auto* paths = new std::vector<std::string>;
  return *paths;
}

class RemoveTempPaths : public ::testing::Environment {
 public:
  void TearDown() override {
    for (const std::string& path : TempPaths()) {
      std::remove(path.c_str());
      std::remove((path + ".tmp").c_str());
    }
  }
};
const ::testing::Environment* const kRemoveTempPaths =
    ::testing::AddGlobalTestEnvironment(new RemoveTempPaths);

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path =
      absl::StrCat(dir != nullptr ? dir : "/tmp", "/stoker_journal_", getpid(), "_", name);
  std::remove(path.c_str());
  TempPaths().push_back(path);
  return path;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void WriteAll(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

StateUpdate Complete(uint64_t job, uint32_t batch) {
  StateUpdate update;
  stoker::v1::TaskId* task = update.mutable_complete_tasks()->add_tasks();
  task->set_job_id(job);
  task->set_batch_index(batch);
  return update;
}

// Writes `n` records through the journal; returns the file's bytes.
std::string WriteRecords(const std::string& path, int n) {
  FileJournal journal(path);
  EXPECT_THAT(journal.Load(), IsOk());
  for (int i = 0; i < n; ++i) journal.Add(Complete(1, static_cast<uint32_t>(i)));
  EXPECT_THAT(journal.Sync(journal.last_added()), IsOk());
  return ReadAll(path);
}

TEST(FileJournalTest, RoundTrip) {
  const std::string path = TempPath("roundtrip");
  WriteRecords(path, 5);
  FileJournal journal(path);
  auto updates = journal.Load();
  ASSERT_THAT(updates, IsOk());
  ASSERT_THAT(*updates, SizeIs(5));
  EXPECT_EQ((*updates)[3].complete_tasks().tasks(0).batch_index(), 3u);
}

TEST(FileJournalTest, TornTailAtEveryOffsetOfTheLastRecordRecoversTheOthers) {
  const std::string path = TempPath("torn");
  const std::string full = WriteRecords(path, 3);
  const size_t last = full.size() - FileJournal::Frame(Complete(1, 2)).size();
  for (size_t cut = last; cut < full.size(); ++cut) {
    WriteAll(path, full.substr(0, cut));
    FileJournal journal(path);
    auto updates = journal.Load();
    ASSERT_THAT(updates, IsOk()) << "cut at " << cut;
    EXPECT_THAT(*updates, SizeIs(2)) << "cut at " << cut;
    EXPECT_EQ(ReadAll(path).size(), last) << "the torn tail is truncated";
  }
}

TEST(FileJournalTest, FlippedByteMidFileIsDataLossNamingTheOffset) {
  const std::string path = TempPath("flip");
  std::string data = WriteRecords(path, 3);
  const size_t record = FileJournal::Frame(Complete(1, 0)).size();
  const size_t second = FileJournal::kMagicBytes + record;
  data[second + FileJournal::kHeaderBytes + 1] ^= 0x40;  // payload of the second record
  WriteAll(path, data);
  FileJournal journal(path);
  EXPECT_THAT(
      journal.Load(),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr(absl::StrCat("journal ", path, ": corrupt record at offset ", second))));
}

TEST(FileJournalTest, GarbageIsDataLoss) {
  const std::string path = TempPath("garbage");
  WriteAll(path, "this is not a journal at all, just some text");
  FileJournal journal(path);
  EXPECT_THAT(journal.Load(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("corrupt record at offset 0")));
}

TEST(FileJournalTest, CompactReplacesTheRecordsAndLaterAppendsFollow) {
  const std::string path = TempPath("compact");
  {
    FileJournal journal(path);
    ASSERT_THAT(journal.Load(), IsOk());
    for (int i = 0; i < 10; ++i) journal.Add(Complete(1, static_cast<uint32_t>(i)));
    StateUpdate snapshot;
    snapshot.mutable_restore()->set_next_job_id(7);
    ASSERT_THAT(journal.Compact(snapshot), IsOk());
    journal.Add(Complete(1, 99));
    ASSERT_THAT(journal.Sync(journal.last_added()), IsOk());
  }
  FileJournal journal(path);
  auto updates = journal.Load();
  ASSERT_THAT(updates, IsOk());
  ASSERT_THAT(*updates, SizeIs(2));
  EXPECT_EQ((*updates)[0].restore().next_job_id(), 7u);
  EXPECT_EQ((*updates)[1].complete_tasks().tasks(0).batch_index(), 99u);
}

// The snapshot is taken with no lock of the journal held (here it Adds, as other RPCs do while
// a compaction writes), and covers only what it says: records added after `through` are kept.
TEST(FileJournalTest, CompactKeepsWhatWasAddedAfterTheSnapshot) {
  const std::string path = TempPath("compact_later");
  {
    FileJournal journal(path);
    ASSERT_THAT(journal.Load(), IsOk());
    for (int i = 0; i < 10; ++i) journal.Add(Complete(1, static_cast<uint32_t>(i)));
    ASSERT_THAT(journal.Compact([&] {
      StateStore::Snapshot snapshot;
      snapshot.update.mutable_restore()->set_next_job_id(7);
      snapshot.through = 8;          // records 9 and 10 are not in it
      journal.Add(Complete(1, 50));  // record 11, added while the compaction runs
      return snapshot;
    }),
                IsOk());
    ASSERT_THAT(journal.Sync(journal.last_added()), IsOk());
  }
  FileJournal journal(path);
  auto updates = journal.Load();
  ASSERT_THAT(updates, IsOk());
  ASSERT_THAT(*updates, SizeIs(4));
  EXPECT_EQ((*updates)[0].restore().next_job_id(), 7u);
  EXPECT_EQ((*updates)[1].complete_tasks().tasks(0).batch_index(), 8u);
  EXPECT_EQ((*updates)[2].complete_tasks().tasks(0).batch_index(), 9u);
  EXPECT_EQ((*updates)[3].complete_tasks().tasks(0).batch_index(), 50u);
}

// A coordinator restarted on the same journal has the same jobs, progress and workers; after a
// compaction too.
TEST(CoordinatorJournalTest, RestartReplaysJobsAndDoneTasks) {
  const std::string path = TempPath("coordinator");
  FakeClock clock(absl::FromUnixSeconds(1000));
  CoordinatorConfig config;
  uint64_t job_id = 0;
  uint64_t worker_id = 0;
  {
    FileJournal journal(path);
    Coordinator coordinator(config, &clock, &journal, TestSourceFactory());
    ASSERT_THAT(coordinator.Recover(), IsOk());
    stoker::v1::OpenJobRequest open;
    open.set_name("job");
    *open.mutable_spec() = SmallJobSpec(/*world_size=*/1, /*epochs=*/1);
    auto job = coordinator.OpenJob(open);
    ASSERT_THAT(job, IsOk());
    job_id = job->job_id();
    stoker::v1::RegisterWorkerRequest reg;
    reg.set_address("127.0.0.1:1");
    reg.set_cores(1);
    auto worker = coordinator.RegisterWorker(reg);
    ASSERT_THAT(worker, IsOk());
    worker_id = worker->worker_id();
    stoker::v1::LeaseTasksRequest lease;
    lease.set_worker_id(worker_id);
    lease.set_job_id(job_id);
    lease.set_max_tasks(3);
    auto leased = coordinator.LeaseTasks(lease);
    ASSERT_THAT(leased, IsOk());
    ASSERT_THAT(leased->leases(), SizeIs(3));
    stoker::v1::ClientHeartbeatRequest heartbeat;
    heartbeat.set_job_id(job_id);
    *heartbeat.add_received() = leased->leases(0).task();
    *heartbeat.add_received() = leased->leases(2).task();
    ASSERT_THAT(coordinator.ClientHeartbeat(heartbeat), IsOk());
  }
  for (int restart = 0; restart < 2; ++restart) {  // the second one replays the compacted file
    FileJournal journal(path);
    Coordinator coordinator(config, &clock, &journal, TestSourceFactory());
    ASSERT_THAT(coordinator.Recover(), IsOk());
    coordinator.InspectState([&](const ClusterState& state) {
      ASSERT_NE(state.FindJobByName("default", "job"), nullptr);
      EXPECT_EQ(state.FindJobByName("default", "job")->id, job_id);
      ASSERT_NE(state.FindWorker(worker_id), nullptr);
      RankProgressSummary summary = state.RankSummary(job_id, 0);
      EXPECT_EQ(summary.done_watermark, 1u);
      EXPECT_EQ(summary.done_above_watermark, 1u);
      EXPECT_EQ(summary.leased, 0u);
      // Batch 1 was leased, not done: pending again, first in line.
      auto pending = state.PendingTasks(job_id, 0, 2);
      ASSERT_THAT(pending, SizeIs(2));
      EXPECT_EQ(pending[0].batch_index(), 1u);
      EXPECT_EQ(pending[1].batch_index(), 3u);
    });
  }
}

TEST(CoordinatorJournalTest, RestartReplaysAResumedRank) {
  const std::string path = TempPath("resume");
  FakeClock clock(absl::FromUnixSeconds(1000));
  CoordinatorConfig config;
  const stoker::v1::JobSpec spec = SmallJobSpec(/*world_size=*/2, /*epochs=*/2);
  uint64_t job_id = 0;
  {
    FileJournal journal(path);
    Coordinator coordinator(config, &clock, &journal, TestSourceFactory());
    ASSERT_THAT(coordinator.Recover(), IsOk());
    // Rank 1 resumes in epoch 1 having consumed 3 of its 5 batches (1, 3, 5).
    stoker::v1::ResumeToken token;
    token.set_version(kResumeTokenVersion);
    token.set_job_name("job");
    token.set_spec_fingerprint(SpecFingerprint(spec));
    token.set_world_size(2);
    token.set_rank(1);
    token.set_epoch(1);
    token.set_universe(10);
    token.set_delivered_prefix(3);
    stoker::v1::OpenJobRequest open;
    open.set_name("job");
    *open.mutable_spec() = spec;
    open.set_rank(1);
    open.add_resume_tokens(token.SerializeAsString());
    auto job = coordinator.OpenJob(open);
    ASSERT_THAT(job, IsOk());
    job_id = job->job_id();
  }
  for (int restart = 0; restart < 2; ++restart) {  // the second one replays the compacted file
    FileJournal journal(path);
    Coordinator coordinator(config, &clock, &journal, TestSourceFactory());
    ASSERT_THAT(coordinator.Recover(), IsOk());
    coordinator.InspectState([&](const ClusterState& state) {
      EXPECT_EQ(state.RankSummary(job_id, 1).total, 2u);
      auto pending = state.PendingTasks(job_id, 1, 5);
      ASSERT_THAT(pending, SizeIs(2));
      EXPECT_EQ(pending[0].epoch(), 1u);
      EXPECT_EQ(pending[0].batch_index(), 7u);
      EXPECT_EQ(pending[1].batch_index(), 9u);
      EXPECT_EQ(state.RankSummary(job_id, 0).total, 10u);  // rank 0 untouched
    });
  }
}

}  // namespace
}  // namespace stoker
