#include "worker/worker.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/ids.h"
#include "common/logging.h"
#include "common/process_limits.h"
#include "common/retry.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

// Batch messages kept for reuse: enough for every producer thread plus a few in flight.
size_t PoolSize(uint32_t threads) { return size_t{threads} * 2 + 4; }

}  // namespace

const char* ProtocolErrorName(ProtocolError reason) {
  switch (reason) {
    case ProtocolError::kAckUnsent:
      return "ack_unsent";
    case ProtocolError::kBadMessage:
      return "bad_message";
  }
  return "unknown";
}

Worker::Worker(WorkerConfig config, std::unique_ptr<CoordinatorClient> coordinator, DatasetIo io,
               Clock* clock)
    : config_(std::move(config)),
      coordinator_(std::move(coordinator)),
      clock_(clock),
      pool_(PoolSize(config_.ResolvedThreads())),
      payload_buffers_(PoolSize(config_.ResolvedThreads())),
      decoded_cache_(config_.decoded_cache_bytes > 0
                         ? std::make_unique<DecodedCache>(config_.decoded_cache_bytes,
                                                          config_.decoded_cache_compression)
                         : nullptr),
      producer_(config_.ResolvedThreads(), 0, &pool_, clock,
                config_.owns_process ? OwnProcessLimits().cpus : 0, decoded_cache_.get()),
      registration_(config_, coordinator_.get(),
                    [this](uint64_t worker_id) { producer_.set_worker_id(worker_id); }),
      ledger_([this] {
        absl::MutexLock lock(&mu_);
        heartbeat_due_ = true;
      }),
      streams_(config_, coordinator_.get(), &pool_, &payload_buffers_, std::move(io),
               [this] { lease_loop_.Wake(); }),
      lease_loop_(config_, coordinator_.get(), &registration_, &streams_, &ledger_, &producer_,
                  clock) {
  producer_.set_simulation(config_.Simulation());
}

Worker::~Worker() { Stop(); }

void Worker::SetRegistrationObserver(std::function<void(bool registered)> observer) {
  registration_.SetObserver(std::move(observer));
}

absl::Status Worker::Start(const std::string& advertise_address) {
  if (config_.decoded_cache_pretouch && decoded_cache_ != nullptr) PretouchDecodedCache();
  registration_.set_advertise_address(advertise_address);
  absl::Status status = RetryUnavailable(config_.register_backoff, clock_,
                                         [this] { return registration_.Register(); });
  if (!status.ok()) return status;
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
  lease_loop_.Start();
  return absl::OkStatus();
}

void Worker::PretouchDecodedCache() {
  const absl::Time start = absl::Now();
  const absl::Duration cpu_before = ThreadCpuTime();
  const bool all = decoded_cache_->Pretouch();
  STOKER_LOG(INFO) << "decoded cache pretouched: " << decoded_cache_->stats().mapped_bytes
                   << " bytes mapped in " << absl::Now() - start << " ("
                   << ThreadCpuTime() - cpu_before << " CPU)"
                   << (all ? "" : "; the kernel refused the rest, mapped as entries need it");
}

void Worker::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  coordinator_->Shutdown();
  lease_loop_.Stop();
  streams_.Stop();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  producer_.Stop();
}

void Worker::Drain(absl::Duration deadline) {
  const absl::Time until = clock_->Now() + deadline;
  streams_.BeginDrain();
  STOKER_LOG(INFO) << "draining: " << ledger_.held() << " tasks held, " << streams_.open_sessions()
                   << " streams";
  ledger_.AwaitNoneHeld(clock_, until);
  for (const auto& session : streams_.sessions()) {
    session->End(absl::UnavailableError("worker draining: reconnect to another worker"));
  }
  // Streams end asynchronously; each hands back what it held as it closes.
  streams_.AwaitAllClosed(clock_, std::max(absl::Seconds(1), until - clock_->Now()));
  STOKER_LOG(INFO) << "drained: handing back " << ledger_.to_hand_back() << " tasks, "
                   << ledger_.held() << " still held by unclosed streams";
  // Every report, in as many heartbeats as it takes (bounded: the lists are).
  for (size_t sent = 0; Heartbeat() && sent < TaskLedger::kMaxPendingReports; ++sent) {
  }
}

void Worker::OpenSessionAsync(pb::OpenStream open, BatchSink* sink, OpenDone done,
                              TenantScope caller) {
  streams_.OpenAsync(std::move(open), sink, std::move(done), std::move(caller));
}

absl::Status Worker::AdmitStream() { return streams_.Admit(); }

void Worker::ReleaseStream() { streams_.Release(); }

void Worker::CloseSession(const std::shared_ptr<StreamSession>& session) {
  // Detached first: leases that arrive for it from now on are handed back by the ledger.
  session->Detach();
  const size_t handed_back = ledger_.HandBack(session.get());
  streams_.Forget(session);
  if (handed_back > 0) {
    STOKER_LOG(INFO) << "stream of job " << session->job()->job_id() << " rank " << session->rank()
                     << " ended; handing back " << handed_back << " unacknowledged tasks";
  }
}

absl::Status Worker::Acknowledge(StreamSession& session, const pb::Ack& ack) {
  google::protobuf::RepeatedPtrField<pb::TaskId> accepted;
  absl::Status status = session.Acknowledge(ack, &accepted);
  if (!status.ok()) CountProtocolError(ProtocolError::kAckUnsent);
  ledger_.Delivered(accepted);
  return status;
}

void Worker::CountProtocolError(ProtocolError reason) {
  protocol_errors_[static_cast<size_t>(reason)].fetch_add(1, std::memory_order_relaxed);
}

uint64_t Worker::protocol_errors(ProtocolError reason) const {
  return protocol_errors_[static_cast<size_t>(reason)].load(std::memory_order_relaxed);
}

pb::WorkerStats Worker::stats() const {
  pb::WorkerStats stats;
  stats.set_batches_produced(producer_.batches_produced());
  stats.set_samples_produced(producer_.samples_produced());
  producer_.ReportRecent(&stats);
  stats.set_open_streams(static_cast<uint32_t>(streams_.open_sessions()));
  return stats;
}

void Worker::HeartbeatLoop() {
  while (true) {
    const absl::Duration interval = registration_.heartbeat_interval();
    {
      absl::MutexLock lock(&mu_);
      auto due = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stopping_ || (coordinator_reachable_ && heartbeat_due_);
      };
      clock_->AwaitWithTimeout(&mu_, absl::Condition(&due), interval);
      if (stopping_) return;
    }
    if (registration_.registered()) {
      Heartbeat();
    } else if (absl::Status status = registration_.Register(); !status.ok()) {
      STOKER_LOG(WARNING) << "registering again failed: " << status;
    }
  }
}

bool Worker::Heartbeat() {
  pb::WorkerHeartbeatRequest request;
  producer_.RecordProcessCpu();
  *request.mutable_stats() = stats();
  request.set_worker_id(registration_.worker_id());
  for (uint64_t job_id : streams_.job_ids()) request.add_jobs(job_id);
  {
    absl::MutexLock lock(&mu_);
    heartbeat_due_ = false;  // what is due goes in this heartbeat, or stays due as a backlog
  }
  ledger_.TakeReports(&request);
  absl::StatusOr<pb::WorkerHeartbeatResponse> response = coordinator_->WorkerHeartbeat(request);
  if (!response.ok()) {
    {
      absl::MutexLock lock(&mu_);
      coordinator_reachable_ = false;  // back to the heartbeat interval until one succeeds
    }
    // Nobody renews a trace window meanwhile (TraceControl): stop recording.
    streams_.SetTraceSampling({});
    ledger_.OnHeartbeatFailed(request, response.status());
    registration_.OnHeartbeatFailed(response.status());
    return false;
  }
  for (const std::shared_ptr<StreamSession>& session : OnHeartbeatAnswered(*response)) {
    session->End(absl::NotFoundError(absl::StrCat(
        "job ", ShortId(session->job()->job_id()),
        " is no longer on the coordinator (retired as finished or idle, or lost with the "
        "coordinator's state): open it again")));
  }
  return ledger_.backlog();
}

std::vector<std::shared_ptr<StreamSession>> Worker::OnHeartbeatAnswered(
    const pb::WorkerHeartbeatResponse& response) {
  registration_.OnHeartbeatAnswered();
  ledger_.OnHeartbeatAnswered(response);
  std::vector<std::shared_ptr<StreamSession>> ending = streams_.EvictJobs(response.retired_jobs());
  streams_.SetTraceSampling(response.trace());
  absl::flat_hash_map<std::string, TenantShare> shares;
  for (const auto& [tenant, share] : response.tenants()) {
    shares[tenant] = TenantShare{share.weight() > 0 ? share.weight() : TenantShare{}.weight,
                                 share.max_prefetch_bytes_per_worker()};
  }
  producer_.SetTenantShares(std::move(shares));
  const bool reports_due = ledger_.reports_due();
  absl::MutexLock lock(&mu_);
  coordinator_reachable_ = true;
  heartbeat_due_ = heartbeat_due_ || reports_due;
  return ending;
}

}  // namespace stoker
