#include "coordinator/etcd/coordinator_replica.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

// How long one Follow waits for the leader's appends before the replica looks at the campaign
// again: a standby that wins starts catching up at most this late.
constexpr absl::Duration kReplicaFollowWait = absl::Milliseconds(50);
// How often a leader looks at its lease and its store; the election's own bound (renewals every
// third of the TTL, leading only within the TTL of the last one) is what makes it step down in
// time, this only decides how soon the process acts on it.
constexpr absl::Duration kReplicaLeadCheck = absl::Milliseconds(50);
// A campaign or a load that failed (etcd unreachable) is tried again after this.
constexpr absl::Duration kReplicaCampaignRetry = absl::Milliseconds(500);
// While etcd stays away, a waiting load logs this often.
constexpr absl::Duration kReplicaWaitLog = absl::Seconds(5);

}  // namespace

CoordinatorReplica::CoordinatorReplica(Coordinator* coordinator, EtcdStateStore* store,
                                       LeaderElection* election,
                                       std::function<void(const absl::Status&)> on_deposed)
    : coordinator_(coordinator),
      store_(store),
      election_(election),
      on_deposed_(std::move(on_deposed)) {}

CoordinatorReplica::~CoordinatorReplica() { Stop(); }

absl::Status CoordinatorReplica::Start(bool wait_for_etcd) {
  if (!wait_for_etcd) {
    ASSIGN_OR_RETURN(std::vector<stoker::v1::StateUpdate> stored, store_->Load());
    RETURN_IF_ERROR(coordinator_->Replay(std::move(stored)));
    StartCampaign();
    run_thread_ = std::thread([this] { Run(); });
    return absl::OkStatus();
  }
  run_thread_ = std::thread([this] {
    if (!LoadPatiently()) return;
    StartCampaign();
    Run();
  });
  return absl::OkStatus();
}

bool CoordinatorReplica::LoadPatiently() {
  absl::Time next_log = absl::InfinitePast();
  while (true) {
    absl::StatusOr<std::vector<stoker::v1::StateUpdate>> stored = store_->Load();
    if (stored.ok()) {
      absl::Status replayed = coordinator_->Replay(*std::move(stored));
      if (replayed.ok()) return true;
      Depose(replayed);
      return false;
    }
    const absl::StatusCode code = stored.status().code();
    if (code != absl::StatusCode::kUnavailable && code != absl::StatusCode::kDeadlineExceeded) {
      Depose(stored.status());
      return false;
    }
    if (absl::Now() >= next_log) {
      STOKER_LOG(WARNING) << "waiting for etcd to load the coordinators' state: "
                          << stored.status();
      next_log = absl::Now() + kReplicaWaitLog;
    }
    absl::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), kReplicaCampaignRetry)) return false;
  }
}

void CoordinatorReplica::StartCampaign() {
  campaign_thread_ = std::thread([this] {
    while (true) {
      absl::StatusOr<uint64_t> won = election_->Campaign();
      absl::MutexLock lock(&mu_);
      if (won.ok() || stopping_) {
        campaign_ = std::move(won);
        campaign_done_ = true;
        return;
      }
      STOKER_LOG(WARNING) << "campaign for the coordinator's leadership failed: " << won.status()
                          << "; trying again";
      mu_.AwaitWithTimeout(absl::Condition(&stopping_), kReplicaCampaignRetry);
    }
  });
}

void CoordinatorReplica::Run() {
  while (true) {  // standby
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      if (campaign_done_) break;
    }
    absl::StatusOr<std::vector<stoker::v1::StateUpdate>> followed =
        store_->Follow(kReplicaFollowWait);
    if (followed.ok()) {
      if (followed->empty()) continue;
      if (absl::Status applied = coordinator_->Replay(*std::move(followed)); !applied.ok()) {
        return Depose(applied);
      }
    } else if (followed.status().code() == absl::StatusCode::kUnavailable) {
      absl::MutexLock lock(&mu_);  // etcd unreachable: Follow resumes where it was
      mu_.AwaitWithTimeout(absl::Condition(&stopping_), kReplicaFollowWait);
    } else {
      return Depose(followed.status());
    }
  }
  uint64_t epoch = 0;
  {
    absl::MutexLock lock(&mu_);
    if (!campaign_.ok()) return;  // stopped while campaigning
    epoch = *campaign_;
  }
  if (absl::Status taken = TakeOver(epoch); !taken.ok()) return Depose(taken);
  // Leader: polls, on real time, the lease as the election's clock sees it and the store. Not a
  // wait on that clock: a leader whose clock stalls still believes it leads, and only a write
  // etcd refuses tells it otherwise; it must step down then, not when its clock moves again.
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), kReplicaLeadCheck)) return;
    }
    if (absl::Status failure = store_->failure(); !failure.ok()) return Depose(failure);
    if (!election_->view().leading) {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;  // Stop resigned
      break;
    }
  }
  Depose(absl::UnavailableError("the leader's lease in etcd expired or was lost"));
}

absl::Status CoordinatorReplica::TakeOver(uint64_t epoch) {
  store_->SetFence(election_->Fence());
  ASSIGN_OR_RETURN(std::vector<stoker::v1::StateUpdate> missed, store_->TakeOver());
  RETURN_IF_ERROR(coordinator_->Replay(std::move(missed)));
  RETURN_IF_ERROR(coordinator_->FinishRecovery());
  absl::MutexLock lock(&mu_);
  leading_ = true;
  epoch_ = epoch;
  STOKER_LOG(INFO) << "leading the coordinators with epoch " << epoch;
  return absl::OkStatus();
}

void CoordinatorReplica::Depose(const absl::Status& why) {
  {
    absl::MutexLock lock(&mu_);
    leading_ = false;
  }
  STOKER_LOG(ERROR) << "this coordinator replica steps down: " << why;
  on_deposed_(why);
}

LeaderView CoordinatorReplica::view() const {
  LeaderView view = election_->view();
  absl::MutexLock lock(&mu_);
  if (leading_ && view.leading) return LeaderView{true, epoch_, ""};
  if (view.leading) return LeaderView{false, 0, ""};  // won, still catching up
  view.leading = false;
  return view;
}

void CoordinatorReplica::Stop() {
  bool was_leading = false;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    was_leading = leading_;
    leading_ = false;
  }
  if (was_leading) {
    if (absl::Status resigned = election_->Resign(); !resigned.ok()) {
      STOKER_LOG(WARNING) << "resigning the lead: " << resigned << " (its lease expires instead)";
    }
  }
  election_->Stop();
  // The run thread may start the campaign thread: joined first.
  if (run_thread_.joinable()) run_thread_.join();
  if (campaign_thread_.joinable()) campaign_thread_.join();
}

}  // namespace stoker
