// Fuzz target (stateful): a sequence of Coordinator RPCs with arbitrary fields
// (coordinator/coordinator.h, proto/stoker/v1/coordinator.proto) on a FakeClock, journaled to an
// in-memory FileJournal, as any authenticated peer (trainer or worker certificate) could send
// them; time passes and CheckLiveness runs between them. No gRPC: the logic class directly.
//
// Input: up to 64 steps framed by SplitChunks (fuzz_input.h); a step's first byte picks the RPC
// or "time passes" (fuzz_specs.h, CoordinatorStep), the rest is the serialized request. So that
// sequences reach deep states, a job or worker id below 16 in a request stands for the id-th job or
// worker the coordinator handed out so far. Datasets are synthetic only (no I/O). Invariants
// checked after every step:
//   - every error has a code the method documents (never INTERNAL, UNKNOWN, ...);
//   - an opened job is found by GetJob with its name and spec;
//   - a lease grant is within max_tasks and max_tasks_per_lease, of the asked job and rank,
//     of tasks not done, expiring after now;
//   - consumed tasks of an accepted ClientHeartbeat are done; a refused one completes nothing;
//   - GetStatus (the advisor over every job) answers;
// and at the end: a coordinator recovered from the journal has the same jobs (name, spec) and
// the same completed work per rank.

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "coordinator/coordinator.h"
#include "coordinator/fake_journal_env_for_test.h"
#include "coordinator/journal.h"
#include "coordinator/tail_placement.h"
#include "data/source.h"
#include "google/protobuf/util/message_differencer.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_specs.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using absl::StatusCode;

constexpr size_t kMaxSteps = 64;
constexpr uint64_t kIdAliases = 16;
constexpr uint32_t kMaxRanksCompared = 8;

// A synthetic dataset reads nothing through its DatasetIo.
absl::StatusOr<std::unique_ptr<Source>> SyntheticOnly(const pb::DatasetSpec& spec, uint64_t seed) {
  if (!spec.has_synthetic()) return absl::InvalidArgumentError("fuzz: synthetic datasets only");
  return CreateSource(spec, seed, DatasetIo::FromEnvironment());
}

CoordinatorConfig FuzzConfig() {
  CoordinatorConfig config;
  config.heartbeat_interval = absl::Milliseconds(500);
  config.worker_timeout = absl::Seconds(5);
  config.lease_duration = absl::Seconds(30);
  config.max_tasks_per_lease = 8;
  config.max_jobs = 16;
  config.tls = TlsConfig::Plaintext();
  FUZZ_CHECK(config.Validate().ok());
  return config;
}

template <typename T>
void CheckCode(const absl::StatusOr<T>& result, std::initializer_list<StatusCode> codes) {
  if (result.ok()) return;
  const StatusCode code = result.status().code();
  if (std::find(codes.begin(), codes.end(), code) == codes.end()) {
    std::fprintf(stderr, "undocumented error: %s\n", result.status().ToString().c_str());
    FUZZ_CHECK(false);
  }
}

class Harness {
 public:
  Harness() : config_(FuzzConfig()), journal_("/journal", &env_) {
    coordinator_ = std::make_unique<Coordinator>(config_, &clock_, &journal_, SyntheticOnly);
    FUZZ_CHECK(coordinator_->Recover().ok());
  }

  void Step(uint8_t rpc, absl::string_view request) {
    switch (rpc % fuzz::kCoordinatorSteps) {
      case fuzz::kOpenJob:
        return Call<pb::OpenJobRequest>(request, [this](pb::OpenJobRequest& r) { OpenJob(r); });
      case fuzz::kGetJob:
        return Call<pb::GetJobRequest>(request, [this](pb::GetJobRequest& r) {
          r.set_job_id(Alias(jobs_, r.job_id()));
          CheckCode(coordinator_->GetJob(r),
                    {StatusCode::kNotFound, StatusCode::kFailedPrecondition});
        });
      case fuzz::kRegisterWorker:
        return Call<pb::RegisterWorkerRequest>(request, [this](pb::RegisterWorkerRequest& r) {
          auto response = coordinator_->RegisterWorker(r);
          CheckCode(response, {StatusCode::kInvalidArgument});
          if (response.ok()) workers_.push_back(response->worker_id());
        });
      case fuzz::kWorkerHeartbeat:
        return Call<pb::WorkerHeartbeatRequest>(
            request, [this](pb::WorkerHeartbeatRequest& r) { WorkerHeartbeat(r); });
      case fuzz::kLeaseTasks:
        return Call<pb::LeaseTasksRequest>(request, [this](pb::LeaseTasksRequest& r) { Lease(r); });
      case fuzz::kClientHeartbeat:
        return Call<pb::ClientHeartbeatRequest>(
            request, [this](pb::ClientHeartbeatRequest& r) { ClientHeartbeat(r); });
      case fuzz::kTimePasses: {
        const uint8_t tenths = request.empty() ? 1 : static_cast<uint8_t>(request[0]);
        clock_.Advance(absl::Milliseconds(100) * tenths);
        coordinator_->CheckLiveness();
        return;
      }
    }
  }

  void CheckStatus() { coordinator_->GetStatus(); }

  // A coordinator recovered from the journal has the same jobs and the same completed work.
  void CheckRecovery() {
    FileJournal journal("/journal", &env_);
    Coordinator recovered(config_, &clock_, &journal, SyntheticOnly);
    FUZZ_CHECK(recovered.Recover().ok());
    const std::vector<std::string> before = coordinator_->InspectState(&DurableView);
    FUZZ_CHECK(recovered.InspectState(&DurableView) == before);
  }

 private:
  template <typename Request, typename Fn>
  static void Call(absl::string_view bytes, Fn fn) {
    Request request;
    if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
    fn(request);
  }

  // The id itself, or for one below kIdAliases the id-th one handed out (of `known`).
  static uint64_t Alias(const std::vector<uint64_t>& known, uint64_t id) {
    return id < kIdAliases && !known.empty() ? known[id % known.size()] : id;
  }
  void AliasTasks(google::protobuf::RepeatedPtrField<pb::TaskId>* tasks) {
    for (pb::TaskId& task : *tasks) task.set_job_id(Alias(jobs_, task.job_id()));
  }

  void OpenJob(pb::OpenJobRequest& request) {
    auto response = coordinator_->OpenJob(request);
    CheckCode(response, {StatusCode::kInvalidArgument, StatusCode::kAlreadyExists,
                         StatusCode::kResourceExhausted});
    if (!response.ok()) return;
    jobs_.push_back(response->job_id());
    pb::GetJobRequest get;
    get.set_job_id(response->job_id());
    auto job = coordinator_->GetJob(get);
    FUZZ_CHECK(job.ok());
    FUZZ_CHECK(job->name() == request.name());
    // GetJob hands workers the job as they run it: with a client tail, the part before it
    // (coordinator/tail_placement.h).
    const absl::StatusOr<TailPlacement> placement = PlaceTail(request.spec());
    FUZZ_CHECK(placement.ok());
    FUZZ_CHECK(
        google::protobuf::util::MessageDifferencer::Equals(job->spec(), placement->worker_spec));
  }

  void WorkerHeartbeat(pb::WorkerHeartbeatRequest& request) {
    request.set_worker_id(Alias(workers_, request.worker_id()));
    AliasTasks(request.mutable_delivered());
    AliasTasks(request.mutable_returned());
    for (uint64_t& job : *request.mutable_jobs()) job = Alias(jobs_, job);
    // INVALID_ARGUMENT: more jobs (or job rates) than --max-jobs (issue 28's request bounds).
    CheckCode(
        coordinator_->WorkerHeartbeat(request),
        {StatusCode::kInvalidArgument, StatusCode::kNotFound, StatusCode::kFailedPrecondition});
  }

  void Lease(pb::LeaseTasksRequest& request) {
    request.set_worker_id(Alias(workers_, request.worker_id()));
    request.set_job_id(Alias(jobs_, request.job_id()));
    auto response = coordinator_->LeaseTasks(request);
    CheckCode(response, {StatusCode::kInvalidArgument, StatusCode::kNotFound,
                         StatusCode::kFailedPrecondition});
    if (!response.ok()) return;
    FUZZ_CHECK(static_cast<uint64_t>(response->leases_size()) <=
               std::min(request.max_tasks(), config_.max_tasks_per_lease));
    const int64_t now_ms = absl::ToUnixMillis(clock_.Now());
    coordinator_->InspectState([&](const ClusterState& state) {
      for (const pb::Lease& lease : response->leases()) {
        FUZZ_CHECK(lease.task().job_id() == request.job_id());
        absl::StatusOr<uint32_t> rank = state.RankOfTask(lease.task());
        FUZZ_CHECK(rank.ok() && *rank == request.rank());
        FUZZ_CHECK(!state.IsTaskDone(lease.task()));
        FUZZ_CHECK(lease.expires_unix_ms() > now_ms);
      }
      return 0;
    });
  }

  void ClientHeartbeat(pb::ClientHeartbeatRequest& request) {
    request.set_job_id(Alias(jobs_, request.job_id()));
    AliasTasks(request.mutable_received());
    AliasTasks(request.mutable_overdue());
    const std::vector<std::string> before = coordinator_->InspectState(&DurableView);
    auto response = coordinator_->ClientHeartbeat(request);
    // UNAVAILABLE: the rank is held by another client (CheckRankHolderLocked).
    CheckCode(response, {StatusCode::kInvalidArgument, StatusCode::kNotFound,
                         StatusCode::kFailedPrecondition, StatusCode::kUnavailable});
    if (!response.ok()) {
      // "then nothing of the request is applied" (coordinator.h).
      FUZZ_CHECK(coordinator_->InspectState(&DurableView) == before);
      return;
    }
    coordinator_->InspectState([&](const ClusterState& state) {
      for (const pb::TaskId& task : request.received()) FUZZ_CHECK(state.IsTaskDone(task));
      return 0;
    });
  }

  // What must survive a restart: each job's name, spec and completed work on its first ranks.
  static std::vector<std::string> DurableView(const ClusterState& state) {
    std::vector<std::string> view;
    for (const JobRecord* job : state.Jobs()) {
      std::string line = absl::StrCat(job->id, " ", job->name, " ", job->spec.SerializeAsString());
      const uint32_t ranks = std::min(job->spec.world_size(), kMaxRanksCompared);
      for (uint32_t rank = 0; rank < ranks; ++rank) {
        const RankProgressSummary summary = state.RankSummary(job->id, rank);
        absl::StrAppend(&line, " ", summary.done_watermark, "+", summary.done_above_watermark);
      }
      view.push_back(std::move(line));
    }
    return view;
  }

  const CoordinatorConfig config_;
  FakeClock clock_;
  FakeJournalEnv env_;
  FileJournal journal_;
  std::unique_ptr<Coordinator> coordinator_;
  std::vector<uint64_t> jobs_;
  std::vector<uint64_t> workers_;
};

}  // namespace
}  // namespace stoker

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stoker::fuzz::QuietProtobufLogs();
  // The coordinator logs every job opened and worker registered: noise at this rate.
  static const bool quiet = (stoker::SetMinLogLevel(stoker::LogLevel::kError), true);
  (void)quiet;
  stoker::Harness harness;
  for (absl::string_view step : stoker::fuzz::SplitChunks(
           absl::string_view(reinterpret_cast<const char*>(data), size), stoker::kMaxSteps)) {
    if (step.empty()) continue;
    harness.Step(static_cast<uint8_t>(step[0]), step.substr(1));
    harness.CheckStatus();
  }
  harness.CheckRecovery();
  return 0;
}
