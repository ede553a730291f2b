#ifndef STOKER_WORKER_WORKER_REGISTRATION_H_
#define STOKER_WORKER_WORKER_REGISTRATION_H_

// The worker's registration with the coordinator: the id and heartbeat interval it was given,
// and when to register again.
//
// A heartbeat answered NOT_FOUND (the coordinator forgot this worker), FAILED_PRECONDITION (its
// id is of a coordinator incarnation that lost its state, common/ids.h) or
// kExhaustedBeforeRegister times in a row RESOURCE_EXHAUSTED (it may have dropped the worker
// meanwhile) marks the worker unregistered: it registers again at once, and the heartbeat loop
// again each interval until that succeeds (the observer hears of both changes; WorkerServer
// reports NOT_SERVING meanwhile).

#include <cstdint>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/coordinator_client.h"
#include "stoker/v1/coordinator.pb.h"
#include "worker/worker_config.h"

namespace stoker {

// Thread-safe.
class WorkerRegistration {
 public:
  static constexpr int kExhaustedBeforeRegister = 3;

  // `on_registered` runs with the new id after every successful registration, before the
  // observer hears of it. `coordinator` must outlive this.
  WorkerRegistration(const WorkerConfig& config, CoordinatorClient* coordinator,
                     std::function<void(uint64_t worker_id)> on_registered);

  // Hears every change of registration (true: registered). Set before the first Register; called
  // without this object's lock held.
  void SetObserver(std::function<void(bool registered)> observer);
  // The address RegisterWorker announces. Set before the first Register.
  void set_advertise_address(const std::string& address);
  // One RegisterWorker call; the coordinator's error as is (UNAVAILABLE: retry).
  absl::Status Register();
  // A heartbeat was answered: the count of refusals starts again.
  void OnHeartbeatAnswered();
  // A heartbeat failed with `status`: counts refusals and, when the coordinator lost this worker,
  // marks it unregistered and registers again once.
  void OnHeartbeatFailed(const absl::Status& status);

  bool registered() const;
  uint64_t worker_id() const;
  absl::Duration heartbeat_interval() const;

 private:
  void SetRegistered(bool registered);

  CoordinatorClient* const coordinator_;
  const std::function<void(uint64_t)> on_registered_;
  std::function<void(bool)> observer_;  // Set before the first Register.

  mutable absl::Mutex mu_;
  stoker::v1::RegisterWorkerRequest request_ ABSL_GUARDED_BY(mu_);
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
  // Heartbeats answered RESOURCE_EXHAUSTED in a row.
  int exhausted_in_a_row_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t worker_id_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration heartbeat_interval_ ABSL_GUARDED_BY(mu_) = absl::Seconds(1);
};

}  // namespace stoker

#endif  // STOKER_WORKER_WORKER_REGISTRATION_H_
