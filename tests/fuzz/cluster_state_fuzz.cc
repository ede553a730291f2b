// Fuzz target: ClusterState::Apply (coordinator/cluster_state.h) over a sequence of arbitrary
// StateUpdates, as a journal or a restore hands them over, with the JobSpec checks OpenJob makes
// (ComputeJobGeometry) for create_job updates that carry no geometry.
//
// Input: up to 64 serialized StateUpdates framed by SplitChunks (fuzz_input.h).
// Invariants checked:
//   - a refused update has one of Apply's documented codes and leaves the state unchanged
//     (Apply is all or nothing);
//   - the queries work on whatever state was reached;
//   - the snapshot round-trips: restoring MakeSnapshot() into an empty state is OK and gives the
//     same snapshot.
// Datasets are synthetic only (the factory refuses shard datasets): replay does no I/O.

#include "coordinator/cluster_state.h"
#include "coordinator/job_validation.h"
#include "data/source.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "tests/fuzz/fuzz_input.h"

namespace stoker {
namespace {

using stoker::v1::StateUpdate;

constexpr size_t kMaxUpdates = 64;
constexpr uint32_t kMaxRanksQueried = 8;

// A synthetic dataset reads nothing through its DatasetIo.
absl::StatusOr<std::unique_ptr<Source>> SyntheticOnly(const stoker::v1::DatasetSpec& spec,
                                                      uint64_t seed) {
  if (!spec.has_synthetic()) return absl::InvalidArgumentError("fuzz: synthetic datasets only");
  return CreateSource(spec, seed, DatasetIo::FromEnvironment());
}

std::string SnapshotBytes(const ClusterState& state) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  state.MakeSnapshot().SerializeToCodedStream(&coded);
  return bytes;
}

bool DocumentedApplyError(absl::StatusCode code) {
  return code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kNotFound ||
         code == absl::StatusCode::kAlreadyExists || code == absl::StatusCode::kFailedPrecondition;
}

void ApplyChecked(ClusterState& state, StateUpdate& update) {
  if (update.has_create_job() && !update.create_job().has_geometry()) {
    absl::StatusOr<stoker::v1::JobGeometry> geometry =
        ComputeJobGeometry(update.create_job().spec(), SyntheticOnly);
    if (geometry.ok()) {
      *update.mutable_create_job()->mutable_geometry() = *geometry;
    } else {
      FUZZ_CHECK(geometry.status().code() == absl::StatusCode::kInvalidArgument);
    }
  }
  const std::string before = SnapshotBytes(state);
  const absl::Status status = state.Apply(update);
  if (!status.ok()) {
    FUZZ_CHECK(DocumentedApplyError(status.code()));
    FUZZ_CHECK(SnapshotBytes(state) == before);
  }
}

void Query(const ClusterState& state) {
  for (const JobRecord* job : state.Jobs()) {
    const uint32_t ranks = std::min(job->spec.world_size(), kMaxRanksQueried);
    for (uint32_t rank = 0; rank < ranks; ++rank) {
      for (const stoker::v1::TaskId& task : state.PendingTasks(job->id, rank, 4)) {
        FUZZ_CHECK(state.RankOfTask(task).ok());
        FUZZ_CHECK(!state.IsTaskDone(task));
      }
      state.RankSummary(job->id, rank);
      state.RankFinished(job->id, rank);
    }
    state.JobFinished(job->id);
  }
  for (const WorkerRecord* worker : state.Workers()) {
    state.LeasesOf(worker->id);
    state.RevokedLeases(worker->id);
  }
  state.EarliestLeaseExpiry();
}

}  // namespace
}  // namespace stoker

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stoker::fuzz::QuietProtobufLogs();
  stoker::ClusterState state;
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  for (absl::string_view chunk : stoker::fuzz::SplitChunks(input, stoker::kMaxUpdates)) {
    stoker::v1::StateUpdate update;
    if (!update.ParseFromArray(chunk.data(), static_cast<int>(chunk.size()))) continue;
    stoker::ApplyChecked(state, update);
  }
  stoker::Query(state);
  const std::string snapshot = stoker::SnapshotBytes(state);
  stoker::v1::StateUpdate restore;
  FUZZ_CHECK(restore.mutable_restore()->ParseFromString(snapshot));
  stoker::ClusterState restored;
  FUZZ_CHECK(restored.Apply(restore).ok());
  FUZZ_CHECK(stoker::SnapshotBytes(restored) == snapshot);
  return 0;
}
