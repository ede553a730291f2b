// Writes the generated seed corpora of tests/fuzz/corpus (run by hand after a format change:
// scripts/build.sh fuzz_make_seeds && build/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus; the
// output is checked in; docs/security.md lists where the other seeds come from). Every seed is the
// output of the real writer: journals from FileJournal, tokens from EncodeResumeToken (and
// PlanResume), shards from ShardWriter, tars from the test fixtures' ustar writer, manifests from
// WriteManifest, state updates as a coordinator makes them.
//
//   fuzz_make_seeds CORPUS_DIR

#include <filesystem>
#include <iostream>

#include "coordinator/cluster_state.h"
#include "coordinator/fake_journal_env_for_test.h"
#include "coordinator/job_validation.h"
#include "coordinator/journal.h"
#include "data/manifest.h"
#include "data/testing/shard_fixtures.h"
#include "plan/resume_plan.h"
#include "plan/resume_token.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_specs.h"

namespace stoker::fuzz {
namespace {

using stoker::testing::WriteFile;
using stoker::v1::StateUpdate;

std::string g_root;

void Write(const std::string& target, const std::string& name, const std::string& bytes) {
  std::filesystem::create_directories(g_root + "/" + target);
  WriteFile(g_root + "/" + target + "/" + name, bytes);
}

stoker::v1::TaskId Task(uint64_t job, uint32_t epoch, uint64_t batch) {
  stoker::v1::TaskId task;
  task.set_job_id(job);
  task.set_epoch(epoch);
  task.set_batch_index(batch);
  return task;
}

StateUpdate CreateJob(uint64_t id, const stoker::v1::JobSpec& spec, bool with_geometry) {
  StateUpdate update;
  update.mutable_create_job()->set_job_id(id);
  update.mutable_create_job()->set_name("job" + std::to_string(id));
  *update.mutable_create_job()->mutable_spec() = spec;
  if (with_geometry) {
    absl::StatusOr<stoker::v1::JobGeometry> geometry = ComputeJobGeometry(spec);
    FUZZ_CHECK(geometry.ok());
    *update.mutable_create_job()->mutable_geometry() = *geometry;
  }
  return update;
}

StateUpdate Register(uint64_t id, int64_t now) {
  StateUpdate update;
  update.mutable_register_worker()->set_worker_id(id);
  update.mutable_register_worker()->set_address("10.0.0." + std::to_string(id) + ":7000");
  update.mutable_register_worker()->set_cores(2);
  update.mutable_register_worker()->set_now_unix_ms(now);
  return update;
}

// A job's life as a coordinator journals it: 2 ranks, 2 workers, leases, deliveries, an expiry,
// a returned and a released lease, a lost worker.
std::vector<StateUpdate> JobLife() {
  const uint64_t job = MakeId(1, 1);
  std::vector<StateUpdate> updates(1);
  updates[0].mutable_start_incarnation()->set_incarnation(1);
  updates.push_back(CreateJob(job, FuzzResumeSpec(2), true));
  updates.push_back(Register(MakeId(1, 1), 1000));
  updates.push_back(Register(MakeId(1, 2), 1000));
  StateUpdate lease;
  lease.mutable_lease_tasks()->set_worker_id(MakeId(1, 1));
  for (uint64_t g : {0, 2, 4}) *lease.mutable_lease_tasks()->add_tasks() = Task(job, 0, g);
  lease.mutable_lease_tasks()->set_expires_unix_ms(5000);
  updates.push_back(lease);
  lease.mutable_lease_tasks()->set_worker_id(MakeId(1, 2));
  lease.mutable_lease_tasks()->clear_tasks();
  for (uint64_t g : {1, 3}) *lease.mutable_lease_tasks()->add_tasks() = Task(job, 0, g);
  updates.push_back(lease);
  StateUpdate complete;
  *complete.mutable_complete_tasks()->add_tasks() = Task(job, 0, 0);
  *complete.mutable_complete_tasks()->add_tasks() = Task(job, 0, 1);
  updates.push_back(complete);
  StateUpdate release;
  release.mutable_release_leases()->set_worker_id(MakeId(1, 1));
  *release.mutable_release_leases()->add_tasks() = Task(job, 0, 2);
  updates.push_back(release);
  StateUpdate give_back;
  give_back.mutable_return_leases()->set_worker_id(MakeId(1, 2));
  *give_back.mutable_return_leases()->add_tasks() = Task(job, 0, 3);
  updates.push_back(give_back);
  StateUpdate heartbeat;
  heartbeat.mutable_worker_heartbeat()->set_worker_id(MakeId(1, 1));
  heartbeat.mutable_worker_heartbeat()->set_now_unix_ms(3000);
  updates.push_back(heartbeat);
  StateUpdate expire;
  expire.mutable_expire_leases()->set_now_unix_ms(6000);
  updates.push_back(expire);
  StateUpdate remove;
  remove.mutable_remove_worker()->set_worker_id(MakeId(1, 2));
  updates.push_back(remove);
  return updates;
}

// A resumed rank, and a finished job retired.
std::vector<StateUpdate> ResumeAndRetire() {
  std::vector<StateUpdate> updates;
  updates.push_back(CreateJob(1, FuzzResumeSpec(2), true));
  updates.push_back(CreateJob(2, FuzzResumeSpec(1), true));
  StateUpdate resume;
  resume.mutable_resume_rank()->set_job_id(1);
  resume.mutable_resume_rank()->set_rank(0);
  resume.mutable_resume_rank()->set_epoch(1);
  for (uint64_t g : {4, 6, 8}) resume.mutable_resume_rank()->add_batches(g);
  updates.push_back(resume);
  updates.push_back(Register(7, 100));
  StateUpdate lease;
  lease.mutable_lease_tasks()->set_worker_id(7);
  *lease.mutable_lease_tasks()->add_tasks() = Task(1, 1, 4);
  lease.mutable_lease_tasks()->set_expires_unix_ms(900);
  updates.push_back(lease);
  StateUpdate retire;
  retire.mutable_retire_job()->set_job_id(2);
  updates.push_back(retire);
  return updates;
}

std::string Framed(const std::vector<StateUpdate>& updates) {
  std::vector<std::string> chunks;
  for (const StateUpdate& update : updates) chunks.push_back(update.SerializeAsString());
  return JoinChunks(chunks);
}

StateUpdate SnapshotOf(const std::vector<StateUpdate>& updates) {
  ClusterState state;
  for (const StateUpdate& update : updates) FUZZ_CHECK(state.Apply(update).ok());
  StateUpdate restore;
  *restore.mutable_restore() = state.MakeSnapshot();
  return restore;
}

void StateSeeds() {
  const std::vector<StateUpdate> life = JobLife();
  const std::vector<StateUpdate> resume = ResumeAndRetire();
  Write("cluster_state", "job_life", Framed(life));
  Write("cluster_state", "resume_and_retire", Framed(resume));
  Write("cluster_state", "restore_then_lease", Framed({SnapshotOf(life), life[4]}));
  Write("cluster_state", "create_job_without_geometry",
        Framed({CreateJob(3, FuzzResumeSpec(3), false)}));

  FakeJournalEnv env;
  {
    FileJournal journal("/j", &env);
    FUZZ_CHECK(journal.Load().ok());
    for (const StateUpdate& update : life) journal.Add(update);
    FUZZ_CHECK(journal.Sync(journal.last_added()).ok());
  }
  const std::string journal = env.Contents("/j");
  Write("journal_replay", "job_life", journal);
  Write("journal_replay", "torn_tail", journal.substr(0, journal.size() - 5));
  {
    FileJournal journal("/j", &env);
    FUZZ_CHECK(journal.Load().ok());
    FUZZ_CHECK(journal.Compact(SnapshotOf(resume)).ok());
  }
  Write("journal_replay", "compacted", env.Contents("/j"));
}

void TokenSeeds() {
  stoker::v1::ResumePoint start;
  start.set_spec_fingerprint(SpecFingerprint(FuzzResumeSpec(2)));
  RankPosition rank0{"job", 2, 0, 5, 0, 2, {8}};
  RankPosition rank1{"job", 2, 1, 5, 0, 3, {}};
  const std::string token0 = EncodeResumeToken(start, rank0);
  const std::string token1 = EncodeResumeToken(start, rank1);
  // The leading byte picks the new world size (1 + b % 4) and rank (b / 4 % world size).
  Write("resume_token", "same_world_size", std::string(1, 1) + JoinChunks({token0, token1}));
  Write("resume_token", "reshard_to_3", std::string(1, 2 + 4) + JoinChunks({token0, token1}));
  RankPosition later{"job", 2, 0, 5, 1, 0, {}};
  Write("resume_token", "next_epoch",
        std::string(1, 1) + JoinChunks({EncodeResumeToken(start, later), token1}));
  absl::StatusOr<stoker::v1::ResumePoint> resumed =
      PlanResume({token0, token1}, FuzzResumeSpec(3), kFuzzResumeSamples, 0);
  if (!resumed.ok()) {
    std::cerr << "PlanResume: " << resumed.status() << "\n";
    std::exit(1);
  }
  std::vector<std::string> tokens;
  for (uint32_t rank = 0; rank < 3; ++rank) {
    tokens.push_back(
        EncodeResumeToken(*resumed, RankPosition{"job", 3, rank, 4, resumed->epoch(), 1, {}}));
  }
  Write("resume_token", "after_reshard", std::string(1, 2) + JoinChunks(tokens));
}

void DataSeeds() {
  const std::string dir = g_root + "/../make_seeds.tmp";
  std::filesystem::create_directories(dir);
  testing::WriteTestShard(dir + "/a.stoker", 0, 3);
  const std::string shard = testing::ReadFile(dir + "/a.stoker");
  Write("shard_reader", "three_records", shard);
  Write("shard_reader", "no_trailer", shard.substr(0, shard.size() - 20));
  testing::CorruptShardRecord(dir + "/a.stoker", 1);
  Write("shard_reader", "bad_crc", testing::ReadFile(dir + "/a.stoker"));

  testing::WriteTar(dir + "/a.tar", {{"train/n01.jpg", testing::SampleBytes(1)},
                                     {"train/n01.cls", "3"},
                                     {"train/n02.png", testing::SampleBytes(2)},
                                     {"train/n03.webp", testing::SampleBytes(3)},
                                     {"train/n03.cls", "7\n"}});
  Write("tar_reader", "ustar_three_samples", testing::ReadFile(dir + "/a.tar"));

  const std::string manifest = testing::WriteTestDataset(dir, 2, 3);
  Write("manifest_json", "two_shards", testing::ReadFile(manifest));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace stoker::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_make_seeds CORPUS_DIR\n";
    return 2;
  }
  stoker::fuzz::g_root = argv[1];
  stoker::fuzz::StateSeeds();
  stoker::fuzz::TokenSeeds();
  stoker::fuzz::DataSeeds();
  return 0;
}
