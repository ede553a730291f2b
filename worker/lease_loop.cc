#include "worker/lease_loop.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace stoker {

namespace pb = ::stoker::v1;

LeaseLoop::LeaseLoop(const WorkerConfig& config, CoordinatorClient* coordinator,
                     const WorkerRegistration* registration, StreamRegistry* streams,
                     TaskLedger* ledger, BatchProducer* producer, Clock* clock)
    : memory_bytes_(config.BatchMemoryBytes()),
      max_lease_poll_(config.max_lease_poll),
      coordinator_(coordinator),
      registration_(registration),
      streams_(streams),
      ledger_(ledger),
      producer_(producer),
      clock_(clock) {}

LeaseLoop::~LeaseLoop() { Stop(); }

void LeaseLoop::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void LeaseLoop::Wake() {
  absl::MutexLock lock(&mu_);
  wake_ = true;
}

void LeaseLoop::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void LeaseLoop::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      wake_ = false;
    }
    const std::vector<std::shared_ptr<StreamSession>> sessions = streams_->LeasingSessions();
    const absl::Time now = clock_->Now();
    absl::Time next_poll = now + max_lease_poll_;
    uint64_t held_bytes = 0;
    tenants_.clear();  // keeps its capacity
    for (const auto& session : sessions) {
      const uint64_t bytes = session->held_tasks() * HeldBytesPerTask(*session);
      held_bytes += bytes;
      TenantPass& tenant = TenantOf(session->job()->tenant());
      tenant.held_bytes += bytes;
      ++tenant.streams;
    }
    const size_t tenant_room = producer_->capacity() / std::max<size_t>(1, tenants_.size());
    for (const auto& session : sessions) {
      const std::string& tenant_name = session->job()->tenant();
      TenantPass& tenant = TenantOf(tenant_name);
      const uint64_t max_held = std::min(
          MaxHeldTasks(*session, sessions.size(), held_bytes),
          MaxHeldTasksOfTenant(*session, producer_->tenant_share(tenant_name), tenant.held_bytes));
      // Each tenant with a stream gets an equal part of the producer's queue, each of its streams
      // an equal part of that (at least one task): no tenant, and no stream listed first, fills
      // it, so the fair queue always has every active tenant's and job's tasks to choose from.
      const size_t stream_room = std::max<size_t>(1, tenant_room / tenant.streams);
      const size_t queued = producer_->queued_of_job(session->job()->job_id());
      // Never more than the producer's bounded queue takes, nor the stream's part of it.
      const uint32_t wanted = static_cast<uint32_t>(
          std::min({static_cast<size_t>(session->WantedTasks(now, &next_poll, max_held)),
                    producer_->room(), stream_room - std::min(stream_room, queued)}));
      if (wanted > 0) {
        const uint64_t bytes = LeaseFor(session, wanted) * HeldBytesPerTask(*session);
        held_bytes += bytes;
        tenant.held_bytes += bytes;
      }
    }
    absl::MutexLock lock(&mu_);
    auto woken = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return wake_ || stopping_; };
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&woken), next_poll);
  }
}

uint64_t LeaseLoop::HeldBytesPerTask(const StreamSession& session) {
  // A compressed batch keeps its raw payload beside the encoded copy until written; codecs bound
  // their output near the input's size. Field columns count at their largest.
  const bool compressed = session.compression().codec() != pb::COMPRESSION_NONE;
  return std::max<uint64_t>(1, session.job()->max_batch_bytes() * (compressed ? 2 : 1));
}

uint64_t LeaseLoop::MaxHeldTasks(const StreamSession& session, size_t sessions,
                                 uint64_t held_bytes) const {
  const uint64_t batch = HeldBytesPerTask(session);
  const uint64_t share = std::max<uint64_t>(1, memory_bytes_ / (sessions + 1) / batch);
  const uint64_t free = held_bytes < memory_bytes_ ? (memory_bytes_ - held_bytes) / batch : 0;
  const uint64_t held = session.held_tasks();
  // At least one batch whenever the budget has room for it, so that every stream moves.
  return std::min(share, held + free);
}

uint64_t LeaseLoop::MaxHeldTasksOfTenant(const StreamSession& session, const TenantShare& share,
                                         uint64_t tenant_held_bytes) {
  if (share.max_prefetch_bytes == 0) return UINT64_MAX;
  const uint64_t batch = HeldBytesPerTask(session);
  const uint64_t free = tenant_held_bytes < share.max_prefetch_bytes
                            ? (share.max_prefetch_bytes - tenant_held_bytes) / batch
                            : 0;
  // At least one batch per stream, so that every stream of the tenant moves.
  return std::max<uint64_t>(1, session.held_tasks() + free);
}

LeaseLoop::TenantPass& LeaseLoop::TenantOf(const std::string& tenant) {
  for (TenantPass& pass : tenants_) {
    if (*pass.name == tenant) return pass;
  }
  return tenants_.emplace_back(TenantPass{&tenant});
}

uint32_t LeaseLoop::LeaseFor(const std::shared_ptr<StreamSession>& session, uint32_t wanted) {
  pb::LeaseTasksRequest request;
  request.set_worker_id(registration_->worker_id());
  request.set_job_id(session->job()->job_id());
  request.set_rank(session->rank());
  request.set_max_tasks(wanted);
  LeaseStart lease_start;  // for traced batches' lease_wait spans; no clock read when untraced
  if (trace::SpanRecorder& recorder = session->job()->trace(); recorder.sampling() != 0) {
    lease_start = LeaseStart{recorder.Now(), trace::SpanRecorder::CurrentThreadId()};
    recorder.NameCurrentThread(absl::StrCat("lease loop ", lease_start.thread_id));
  }
  absl::StatusOr<pb::LeaseTasksResponse> response = coordinator_->LeaseTasks(request);
  if (!response.ok()) {
    STOKER_LOG(DEBUG) << "lease failed: " << response.status();
    session->OnLeased(0, clock_->Now(), max_lease_poll_);
    return 0;
  }
  session->OnLeased(static_cast<uint32_t>(response->leases_size()), clock_->Now(), max_lease_poll_);
  ledger_->Hold(*session, response->leases());
  for (const pb::Lease& lease : response->leases()) {
    producer_->Submit(
        session->job(), lease.task(),
        [session](absl::Status status, std::unique_ptr<pb::BatchMessage> batch) {
          session->OnProduced(std::move(status), std::move(batch));
        },
        lease_start);
  }
  return static_cast<uint32_t>(response->leases_size());
}

}  // namespace stoker
