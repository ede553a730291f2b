#include "coordinator/etcd/leader_election.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace stoker {
namespace {

// etcd errors a later attempt may not meet: no member answered, a lease that expired between
// grant and put, a watch whose start revision was compacted.
bool ElectionRetryable(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status) ||
         absl::IsNotFound(status) || absl::IsOutOfRange(status);
}

}  // namespace

LeaderElection::LeaderElection(EtcdClient* etcd, std::string key, std::string my_address,
                               absl::Duration ttl, Clock* clock)
    : etcd_(etcd),
      key_(std::move(key)),
      my_address_(std::move(my_address)),
      ttl_(ttl),
      clock_(clock) {}

LeaderElection::~LeaderElection() { Stop(); }

absl::Status LeaderElection::Stopped() const {
  return absl::CancelledError(absl::StrCat("election for ", key_, " stopped"));
}

absl::StatusOr<uint64_t> LeaderElection::Campaign() {
  {
    absl::MutexLock lock(&mu_);
    if (LeadingLocked()) return epoch_;
  }
  // A lead that lapsed locally may still hold the key in etcd: give it up (fenced), or this
  // campaign would wait for its own key to go.
  Resign().IgnoreError();
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (stopped_) return Stopped();
    }
    int64_t watch_from = 0;
    absl::StatusOr<uint64_t> won = TryAcquire(&watch_from);
    if (won.ok() && *won > 0) {
      absl::MutexLock lock(&renewer_mu_);
      if (renewer_.joinable()) renewer_.join();
      renewer_ = std::thread([this] { RenewLoop(); });
      return *won;
    }
    absl::Status status = won.status();
    if (status.ok() && watch_from > 0) status = WaitForVacancy(watch_from);
    if (status.ok()) continue;
    {
      absl::MutexLock lock(&mu_);
      if (stopped_) return Stopped();
    }
    if (!ElectionRetryable(status)) return status;
    if (!Pause(ttl_ / 4)) return Stopped();
  }
}

absl::StatusOr<uint64_t> LeaderElection::TryAcquire(int64_t* watch_from) {
  const absl::Time sent = clock_->Now();
  etcdserverpb::LeaseGrantRequest grant;
  grant.set_ttl(std::max<int64_t>(1, std::ceil(absl::ToDoubleSeconds(ttl_))));
  absl::StatusOr<etcdserverpb::LeaseGrantResponse> lease = etcd_->LeaseGrant(grant);
  if (!lease.ok()) return lease.status();
  etcdserverpb::TxnRequest txn;
  etcdserverpb::Compare* vacant = txn.add_compare();
  vacant->set_key(key_);
  vacant->set_target(etcdserverpb::Compare::CREATE);
  vacant->set_result(etcdserverpb::Compare::EQUAL);
  vacant->set_create_revision(0);
  etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
  put->set_key(key_);
  put->set_value(my_address_);
  put->set_lease(lease->id());
  txn.add_failure()->mutable_request_range()->set_key(key_);
  absl::StatusOr<etcdserverpb::TxnResponse> response = etcd_->Txn(txn);
  if (response.ok() && response->succeeded()) {
    // A put that creates a key gives it the transaction's revision as create revision.
    const uint64_t epoch = response->header().revision();
    absl::MutexLock lock(&mu_);
    holding_ = true;
    renewing_ = true;
    lease_ = lease->id();
    epoch_ = epoch;
    renewed_at_ = sent;
    leader_address_ = my_address_;
    leader_epoch_ = epoch;
    return epoch;
  }
  // Not ours: the lease would only linger until its TTL.
  etcdserverpb::LeaseRevokeRequest revoke;
  revoke.set_id(lease->id());
  etcd_->LeaseRevoke(revoke).IgnoreError();
  if (!response.ok()) return response.status();
  const auto& kvs = response->responses(0).response_range().kvs();
  absl::MutexLock lock(&mu_);
  if (kvs.empty()) {
    // Deleted between the compare and now: try again at once.
    leader_address_.clear();
    *watch_from = 0;
  } else {
    leader_address_ = kvs[0].value();
    leader_epoch_ = kvs[0].create_revision();
    *watch_from = response->header().revision() + 1;
  }
  return 0;
}

absl::Status LeaderElection::WaitForVacancy(int64_t watch_from) {
  etcdserverpb::WatchCreateRequest request;
  request.set_key(key_);
  request.set_start_revision(watch_from);
  request.add_filters(etcdserverpb::WatchCreateRequest::NOPUT);
  absl::StatusOr<std::unique_ptr<EtcdWatch>> watch = etcd_->Watch(request);
  if (!watch.ok()) return watch.status();
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return Stopped();
    watch_ = watch->get();
  }
  absl::Status status;
  for (bool vacant = false; !vacant && status.ok();) {
    // Bounded so that a wait never outlives a silently dead stream by much.
    absl::StatusOr<etcdserverpb::WatchResponse> next = (*watch)->Next(ttl_);
    if (absl::IsDeadlineExceeded(next.status())) continue;
    if (!next.ok()) {
      status = next.status();
    } else if (next->canceled()) {
      status = absl::UnavailableError(
          absl::StrCat("watch of ", key_, " cancelled by etcd: ", next->cancel_reason()));
    }
    if (next.ok()) {
      vacant = std::any_of(next->events().begin(), next->events().end(),
                           [](const auto& e) { return e.type() == mvccpb::Event::DELETE; });
    }
  }
  absl::MutexLock lock(&mu_);
  watch_ = nullptr;
  if (status.ok()) leader_address_.clear();
  return status;
}

bool LeaderElection::Pause(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  clock_->AwaitWithTimeout(&mu_, absl::Condition(&stopped_), d);
  return !stopped_;
}

void LeaderElection::RenewLoop() {
  // After a failed renewal (the member it went to died, etcd is electing a raft leader) the
  // next try comes sooner than a period: two lost periods would already spend the lease.
  absl::Duration wait = ttl_ / 3;
  for (;;) {
    int64_t lease = 0;
    {
      absl::MutexLock lock(&mu_);
      auto done = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopped_ || !renewing_; };
      clock_->AwaitWithTimeout(&mu_, absl::Condition(&done), wait);
      if (done()) return;
      lease = lease_;
    }
    const absl::Time sent = clock_->Now();
    absl::StatusOr<etcdserverpb::LeaseKeepAliveResponse> renewed = etcd_->LeaseKeepAlive(lease);
    absl::MutexLock lock(&mu_);
    wait = ttl_ / 12;
    if (renewed.ok() && renewed->ttl() > 0) {
      renewed_at_ = std::max(renewed_at_, sent);
      wait = ttl_ / 3;
    } else if (renewed.ok() || absl::IsNotFound(renewed.status())) {
      // The lease expired in etcd, and the key with it: lost for good.
      holding_ = false;
      renewing_ = false;
      leader_address_.clear();
      return;
    }
    // Other errors: try again soon; view() stops leading by itself meanwhile.
  }
}

void LeaderElection::StopRenewing() {
  {
    absl::MutexLock lock(&mu_);
    renewing_ = false;
  }
  absl::MutexLock lock(&renewer_mu_);
  if (renewer_.joinable()) renewer_.join();
}

bool LeaderElection::LeadingLocked() const {
  return holding_ && !stopped_ && clock_->Now() < renewed_at_ + ttl_;
}

LeaderView LeaderElection::view() const {
  absl::MutexLock lock(&mu_);
  LeaderView view;
  view.leading = LeadingLocked();
  view.epoch = view.leading ? epoch_ : leader_epoch_;
  // A holder whose lease may have lapsed does not know who leads next.
  view.leader_address = view.leading ? my_address_ : holding_ ? "" : leader_address_;
  return view;
}

etcdserverpb::Compare LeaderElection::Fence() const {
  absl::MutexLock lock(&mu_);
  etcdserverpb::Compare fence;
  fence.set_key(key_);
  fence.set_target(etcdserverpb::Compare::CREATE);
  fence.set_result(etcdserverpb::Compare::EQUAL);
  fence.set_create_revision(static_cast<int64_t>(epoch_));
  return fence;
}

absl::Status LeaderElection::Resign() {
  StopRenewing();
  int64_t lease = 0;
  {
    absl::MutexLock lock(&mu_);
    if (!holding_) return absl::OkStatus();
    lease = lease_;
  }
  etcdserverpb::TxnRequest txn;
  *txn.add_compare() = Fence();
  txn.add_success()->mutable_request_delete_range()->set_key(key_);
  absl::Status status = etcd_->Txn(txn).status();
  etcdserverpb::LeaseRevokeRequest revoke;
  revoke.set_id(lease);
  absl::Status revoked = etcd_->LeaseRevoke(revoke).status();
  if (status.ok() && !absl::IsNotFound(revoked)) status = revoked;
  absl::MutexLock lock(&mu_);
  holding_ = false;
  lease_ = 0;
  leader_address_.clear();
  return status;
}

bool LeaderElection::WaitUntilNotLeading(absl::Duration timeout) {
  const absl::Time deadline = clock_->Now() + timeout;
  absl::MutexLock lock(&mu_);
  auto gone = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return !holding_ || stopped_; };
  while (LeadingLocked()) {
    if (clock_->Now() >= deadline) return false;
    // Wakes when the lease lapses locally (renewals move that later: loop) or is lost.
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&gone), std::min(deadline, renewed_at_ + ttl_));
  }
  return true;
}

void LeaderElection::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    if (watch_ != nullptr) watch_->Cancel();
  }
  StopRenewing();
}

void LeaderElection::Abandon() { StopRenewing(); }

int64_t LeaderElection::lease_id() const {
  absl::MutexLock lock(&mu_);
  return holding_ ? lease_ : 0;
}

}  // namespace stoker
