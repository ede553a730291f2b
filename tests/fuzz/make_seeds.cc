// Writes the generated seed corpora of tests/fuzz/corpus (run by hand after a format change:
// scripts/build.sh fuzz_make_seeds && build/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus; the
// output is checked in; docs/fuzzing.md lists where the other seeds come from). Every seed is the
// output of the real writer: journals from FileJournal, tokens from EncodeResumeToken (and
// PlanResume), shards from ShardWriter, tars from the test fixtures' ustar writer, manifests from
// WriteManifest, state updates as a coordinator makes them, frames from CompressPayload, batch
// messages, client messages and RPC requests as protobuf serializes them, typed target values
// from AppendWireTarget.
//
//   fuzz_make_seeds CORPUS_DIR

#include <filesystem>
#include <iostream>
#include <type_traits>

#include "augment/targets/target_codec.h"
#include "common/payload_codec.h"
#include "coordinator/cluster_state.h"
#include "coordinator/fake_journal_env_for_test.h"
#include "coordinator/job_validation.h"
#include "coordinator/journal.h"
#include "data/manifest.h"
#include "data/testing/shard_fixtures.h"
#include "plan/resume_plan.h"
#include "plan/resume_token.h"
#include "stoker/v1/coordinator.pb.h"
#include "stoker/v1/worker.pb.h"
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
    absl::StatusOr<stoker::v1::JobGeometry> geometry =
        ComputeJobGeometry(spec, SourceFactoryFor(DatasetIo::FromEnvironment()));
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

// Step [selector][argument] of the stateful targets.
std::string Step(uint8_t selector, const std::string& argument = "") {
  return std::string(1, static_cast<char>(selector)) + argument;
}

template <typename Message,
          typename = std::enable_if_t<std::is_base_of_v<google::protobuf::Message, Message>>>
std::string Step(uint8_t selector, const Message& message) {
  return Step(selector, message.SerializeAsString());
}

// A BatchMessage as a worker sends it (header, then data), cut into slices as gRPC may hand
// them over; also fields in another order and a repeated data field (protobuf: the last wins).
void BatchWireSeeds() {
  stoker::v1::BatchMessage message;
  stoker::v1::BatchHeader* header = message.mutable_header();
  header->mutable_task()->set_job_id(MakeId(1, 1));
  header->mutable_task()->set_batch_index(3);
  for (int64_t d : {2, 4, 4, 3}) header->add_shape(d);
  header->add_labels(1);
  header->add_labels(7);
  header->set_dtype(stoker::v1::DTYPE_UINT8);
  (*header->mutable_bad_samples())["read_error"] = 1;
  header->add_offered_compression(stoker::v1::COMPRESSION_LZ4);
  message.set_data(std::string(96, '\x5a'));
  const std::string wire = message.SerializeAsString();
  Write("batch_wire", "one_slice", JoinChunks({wire}));
  Write("batch_wire", "three_slices",
        JoinChunks({wire.substr(0, 7), wire.substr(7, 50), wire.substr(57)}));
  stoker::v1::BatchMessage data_only;
  data_only.set_data("first");
  stoker::v1::BatchMessage header_only = message;
  header_only.clear_data();
  Write("batch_wire", "data_before_header_twice",
        JoinChunks({data_only.SerializeAsString(), header_only.SerializeAsString(), wire}));
  Write("batch_wire", "truncated_data", JoinChunks({wire.substr(0, wire.size() - 10)}));
}

// A detection batch as a worker writes it: a 2 × 4 × 6 × 3 uint8 tensor, then one column per
// named typed field, each sample's value in its wire form (AppendWireTarget, the worker's
// writer). Sample 0 has two instances with K = 2 keypoints, sample 1 none.
stoker::v1::BatchMessage DetectionBatch(const std::vector<std::string>& fields) {
  std::vector<SampleTargets> samples(2);
  for (SampleTargets& targets : samples) {
    targets.canvas_height = 4;
    targets.canvas_width = 6;
    targets.boxes.emplace();
    targets.box_labels.emplace();
    targets.masks.emplace();
    targets.masks->height = 4;
    targets.masks->width = 6;
    targets.keypoints.emplace();
    targets.keypoints->per_instance = 2;
  }
  SampleTargets& two = samples[0];
  *two.boxes = {0, 0, 3, 2, 2, 1, 6, 4};
  *two.box_labels = {3, 17};
  two.masks->count = 2;
  two.masks->pixels.assign(2 * 4 * 6, 0);
  for (int x = 0; x < 3; ++x) two.masks->pixels[x] = two.masks->pixels[6 + x] = 1;
  two.masks->pixels[24 + 6 + 2] = 1;
  two.keypoints->count = 2;
  two.keypoints->xy = {1.5f, 0.5f, 0, 0, 3, 2, -1, 5};  // The last outside the image.
  two.keypoints->visibility = {2, 0, 2, 1};
  stoker::v1::BatchMessage message;
  stoker::v1::BatchHeader* header = message.mutable_header();
  header->mutable_task()->set_job_id(MakeId(1, 1));
  for (int64_t d : {2, 4, 6, 3}) header->add_shape(d);
  for (uint64_t i : {0, 1}) {
    header->add_sample_indices(i);
    header->add_labels(0);
  }
  header->set_dtype(stoker::v1::DTYPE_UINT8);
  header->set_layout(stoker::v1::LAYOUT_HWC);
  std::string data(2 * 4 * 6 * 3, '\x40');
  for (const std::string& field : fields) {
    stoker::v1::FieldColumn* column = header->add_fields();
    column->set_name(field);
    column->add_offsets(data.size());
    for (const SampleTargets& targets : samples) {
      AppendWireTarget(field, targets, &data);
      column->add_offsets(data.size());
    }
  }
  message.set_data(std::move(data));
  return message;
}

// CheckTargetColumns' input: the header, then the payload in slices.
std::string TargetColumnsInput(const stoker::v1::BatchMessage& message,
                               const std::vector<size_t>& cuts) {
  std::vector<std::string> chunks = {message.header().SerializeAsString()};
  size_t from = 0;
  for (size_t cut : cuts) {
    chunks.push_back(message.data().substr(from, cut - from));
    from = cut;
  }
  chunks.push_back(message.data().substr(from));
  return JoinChunks(chunks);
}

void TargetColumnsSeeds() {
  const stoker::v1::BatchMessage all =
      DetectionBatch({"boxes", "box_labels", "masks", "keypoints"});
  Write("target_columns", "detection_one_slice", TargetColumnsInput(all, {}));
  // A cut inside sample 0's keypoints: they are read from gathered bytes.
  const size_t keypoints = all.header().fields(3).offsets(0);
  Write("target_columns", "detection_keypoints_cut",
        TargetColumnsInput(all, {keypoints / 2, keypoints + 6}));
  Write("target_columns", "keypoints_without_boxes",
        TargetColumnsInput(DetectionBatch({"keypoints", "masks"}), {150}));
  stoker::v1::BatchMessage ragged = all;  // Sample 0's label column one instance short.
  ragged.mutable_header()->mutable_fields(1)->set_offsets(1, all.header().fields(1).offsets(1) - 8);
  Write("target_columns", "labels_fewer_than_boxes", TargetColumnsInput(ragged, {}));
  stoker::v1::BatchMessage no_k = all;  // Sample 0's K overwritten with 0.
  no_k.mutable_data()->replace(keypoints, 4, std::string(4, '\0'));
  Write("target_columns", "keypoints_k_zero", TargetColumnsInput(no_k, {}));
}

// Control bytes of payload_frame: codec and mode, then the announced size (3 bytes).
std::string FrameControl(bool zstd, bool lie, uint32_t size, int level_bits = 0) {
  std::string control(4, '\0');
  control[0] = static_cast<char>((zstd ? 1 : 0) | (lie ? 2 : 0) | (level_bits << 2));
  for (int i = 0; i < 3; ++i) control[1 + i] = static_cast<char>(size >> (8 * i));
  return control;
}

void PayloadFrameSeeds() {
  std::string raw;
  for (int i = 0; i < 600; ++i) raw += static_cast<char>(i % 7 == 0 ? i : 'a' + i % 3);
  const auto span = absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
  for (const bool zstd : {false, true}) {
    stoker::v1::CompressionChoice choice;
    choice.set_codec(zstd ? stoker::v1::COMPRESSION_ZSTD : stoker::v1::COMPRESSION_LZ4);
    PayloadBuffer frame;
    FUZZ_CHECK(CompressPayload(choice, span, &frame).ok());
    const std::string bytes(reinterpret_cast<const char*>(frame.data()), frame.size());
    const std::string codec = zstd ? "zstd" : "lz4";
    Write("payload_frame", codec + "_honest",
          JoinChunks({FrameControl(zstd, false, 600), bytes, zstd ? "zstd:3" : "lz4"}));
    Write("payload_frame", codec + "_announced_larger",
          JoinChunks({FrameControl(zstd, false, 4096), bytes, "none"}));
    Write("payload_frame", codec + "_truncated",
          JoinChunks({FrameControl(zstd, false, 600), bytes.substr(0, bytes.size() - 9)}));
    Write("payload_frame", codec + "_declares_less",
          JoinChunks({FrameControl(zstd, true, 300, 10), raw, "zstd:-7"}));
    Write("payload_frame", codec + "_declares_more",
          JoinChunks({FrameControl(zstd, true, 70000, 4), raw, "zstd:19"}));
  }
}

void AwsConfigSeeds() {
  const std::string credentials =
      "[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG\n"
      "\n# team\n[prod]\naws_access_key_id=AKIAPROD\naws_secret_access_key=prodSECRETprodSECRET\n"
      "aws_session_token = FwoGZXIvYXdzE\n";
  const std::string config =
      "[default]\nregion = us-east-1\n[profile dev]\naws_access_key_id = AKIADEV\n"
      "aws_secret_access_key = devSECRETdevSECRET\nregion = eu-west-1\n";
  const std::string json =
      "{\"AccessKeyId\":\"ASIACONTAINER\",\"SecretAccessKey\":\"cSECRETcSECRET\",\"Token\":\"tok\","
      "\"Expiration\":\"2026-11-26T06:00:00Z\"}";
  const std::string xml =
      "<AssumeRoleWithWebIdentityResponse><Credentials><AccessKeyId>ASIASTS</AccessKeyId>"
      "<SecretAccessKey>s&amp;cret</SecretAccessKey><SessionToken>t</SessionToken>"
      "<Expiration>2026-11-26T06:00:00Z</Expiration></Credentials>"
      "</AssumeRoleWithWebIdentityResponse>";
  Write("aws_config", "default_profile_aws",
        JoinChunks({credentials, config, "", "", "eu-central-1", "s3://my-bucket/train/a b.tar",
                    json, xml}));
  Write("aws_config", "named_profiles_minio",
        JoinChunks({credentials, config, "dev", "http://127.0.0.1:9000/", "",
                    "s3://data.example/shards/", "{}", "<Error><Code>Denied</Code></Error>"}));
  Write("aws_config", "missing_secret",
        JoinChunks({"[prod]\naws_access_key_id = AKIAPROD\n", "", "prod", "ftp://x", "", "s3://AB",
                    "{\"AccessKeyId\":\"A\",\"Expiration\":\"soon\"}", "<x>"}));
}

void StreamSessionSeeds() {
  using stoker::v1::ClientMessage;
  ClientMessage open;
  open.mutable_open()->set_job_id(5);
  open.mutable_open()->set_client_id("trainer-0");
  open.mutable_open()->mutable_compression()->set_codec(stoker::v1::COMPRESSION_LZ4);
  ClientMessage credit;
  credit.mutable_credit()->set_n(4);
  ClientMessage ack;
  *ack.mutable_ack()->add_tasks() = Task(11, 0, 0);
  *ack.mutable_ack()->add_tasks() = Task(11, 0, 1);
  ClientMessage zstd;
  zstd.mutable_set_compression()->set_codec(stoker::v1::COMPRESSION_ZSTD);
  zstd.mutable_set_compression()->set_level(3);
  const std::string produce = std::string("\x00\x00\x10\x07", 4);  // 4 KiB, compressible
  const std::string noise = std::string("\x00\x00\x08\x01", 4);    // 2 KiB, noise
  Write("stream_session", "open_credit_write_ack",
        JoinChunks({Step(kClientMessage, open), Step(kClientMessage, credit), Step(kLease, "\x08"),
                    Step(kProduce, produce), Step(kProduce, noise), Step(kWrite), Step(kWrite),
                    Step(kClientMessage, ack), Step(kClientMessage, zstd), Step(kProduce, noise),
                    Step(kWrite), Step(kLease, "\x08"), Step(kEnd)}));
  ClientMessage bad_level = zstd;
  bad_level.mutable_set_compression()->set_level(40);
  Write("stream_session", "bad_set_compression",
        JoinChunks({Step(kClientMessage, open), Step(kClientMessage, credit), Step(kLease, "\x02"),
                    Step(kClientMessage, bad_level)}));
  ClientMessage empty_credit;
  empty_credit.mutable_credit()->set_n(1);
  Write("stream_session", "backoff_then_failed_batch",
        JoinChunks({Step(kClientMessage, open), Step(kLease, "\x01"), Step(kTime, "\x05"),
                    Step(kClientMessage, empty_credit), Step(kLease, "\x01"),
                    Step(kProduce, std::string("\x0f\x00\x01\x00", 4))}));
  Write("stream_session", "credit_before_open", JoinChunks({Step(kClientMessage, credit)}));
}

void CoordinatorRpcSeeds() {
  stoker::v1::RegisterWorkerRequest worker;
  worker.set_address("10.0.0.1:7000");
  worker.set_cores(4);
  stoker::v1::RegisterWorkerRequest worker2 = worker;
  worker2.set_address("10.0.0.2:7000");
  stoker::v1::OpenJobRequest open;
  open.set_name("imagenet-1");
  *open.mutable_spec() = FuzzResumeSpec(2);
  stoker::v1::LeaseTasksRequest lease;  // worker and job ids 0: the first handed out
  lease.set_max_tasks(3);
  stoker::v1::WorkerHeartbeatRequest beat;
  *beat.add_delivered() = Task(0, 0, 0);
  beat.add_jobs(0);
  stoker::v1::ClientHeartbeatRequest client;
  client.set_client_id("trainer-0");
  *client.add_received() = Task(0, 0, 0);
  *client.add_overdue() = Task(0, 0, 2);
  stoker::v1::LeaseTasksRequest lease2 = lease;
  lease2.set_worker_id(1);
  lease2.set_rank(1);
  Write("coordinator_rpc", "job_life",
        JoinChunks({Step(kRegisterWorker, worker), Step(kRegisterWorker, worker2),
                    Step(kOpenJob, open), Step(kLeaseTasks, lease), Step(kWorkerHeartbeat, beat),
                    Step(kClientHeartbeat, client), Step(kLeaseTasks, lease2),
                    Step(kTimePasses, "\x40"), Step(kLeaseTasks, lease2),
                    Step(kGetJob, stoker::v1::GetJobRequest())}));
  stoker::v1::OpenJobRequest other = open;
  other.mutable_spec()->set_epochs(5);
  stoker::v1::ClientHeartbeatRequest bad_rank = client;
  bad_rank.set_rank(9);
  Write("coordinator_rpc", "conflicts_and_bad_fields",
        JoinChunks({Step(kOpenJob, open), Step(kOpenJob, other), Step(kClientHeartbeat, bad_rank),
                    Step(kLeaseTasks, lease),
                    Step(kRegisterWorker, stoker::v1::RegisterWorkerRequest()),
                    Step(kTimePasses, "\xff")}));
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
  stoker::fuzz::BatchWireSeeds();
  stoker::fuzz::PayloadFrameSeeds();
  stoker::fuzz::AwsConfigSeeds();
  stoker::fuzz::StreamSessionSeeds();
  stoker::fuzz::CoordinatorRpcSeeds();
  stoker::fuzz::TargetColumnsSeeds();
  return 0;
}
