#include "coordinator/leader_gate.h"

#include "absl/strings/str_cat.h"

namespace stoker {

absl::StatusOr<uint64_t> LeaderGate::Check(grpc::ServerContextBase* context) const {
  const LeaderView view = leadership_->view();
  if (view.leading) return view.epoch;
  std::string self;
  {
    absl::MutexLock lock(&mu_);
    self = self_;
  }
  if (view.leader_address.empty()) {
    return absl::UnavailableError(
        absl::StrCat("coordinator ", self, " is a standby; no leader is elected yet"));
  }
  context->AddTrailingMetadata(kLeaderMetadata, view.leader_address);
  return absl::UnavailableError(
      absl::StrCat("coordinator ", self, " is a standby; the leader is ", view.leader_address));
}

}  // namespace stoker
