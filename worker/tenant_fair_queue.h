#ifndef STOKER_WORKER_TENANT_FAIR_QUEUE_H_
#define STOKER_WORKER_TENANT_FAIR_QUEUE_H_

// Which queued task a worker's producer runs next (docs/decisions/0071-tenant-fair-shares.md):
// start-time fair queueing over tenants by weight, then over each tenant's jobs equally. Each
// tenant and job has a virtual time, advanced by the measured time of its tasks (divided by the
// tenant's weight); the tenant with queued tasks and the least virtual time goes next, then its
// job with the least. Work conserving: only tenants with queued tasks compete. A tenant (or job)
// whose queue was empty starts again at no less than the virtual time now (the start of the
// last task taken), so time spent idle banks no credit.
//
// A task is charged when taken, at its job's estimated cost (so that several producer threads
// taking tasks at once do not all pick the same tenant), and corrected when done.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace stoker {

// Thread-compatible. Its state is bounded by the tenants and jobs with queued or running tasks:
// those with neither are forgotten.
class TenantFairQueue {
 public:
  // A task taken by Next(), to hand back to Done().
  struct Turn {
    uint64_t job_id = 0;
    // The virtual seconds charged when taken.
    double charged_seconds = 0;
  };

  // A task of `job_id`, owned by `tenant` (of weight `weight` > 0, updating the tenant's), is
  // queued.
  void Add(absl::string_view tenant, uint64_t job_id, double weight);
  // Takes the next task: the job whose queued task runs next. nullopt when none is queued.
  std::optional<Turn> Next();
  // The task taken as `turn` finished (or failed) after `cost` of producer time.
  void Done(const Turn& turn, absl::Duration cost);
  // Drops every queued and running task (the producer is stopping).
  void Clear();

  // Tasks of `job_id` queued and not yet taken.
  size_t queued_of_job(uint64_t job_id) const;
  // The virtual time of `tenant` (seconds of producer time per unit of weight); 0 when it has
  // nothing queued or running. For tests.
  double virtual_seconds(absl::string_view tenant) const;

 private:
  struct TenantFlow {
    double weight = 1;
    double virtual_seconds = 0;
    // The start of the last task taken of the tenant's jobs, where its returning jobs start.
    double job_clock = 0;
    size_t queued = 0;
    size_t running = 0;
  };
  using TenantEntry = std::pair<const std::string, TenantFlow>;
  struct JobFlow {
    TenantEntry* tenant = nullptr;  // stable: node_hash_map
    double virtual_seconds = 0;
    // The job's last measured cost, charged when one of its tasks is taken.
    double estimate_seconds = 0;
    size_t queued = 0;
    size_t running = 0;
  };
  // Forgets `job_id` (and its tenant) when nothing of it is queued or running.
  void ForgetIdle(uint64_t job_id);

  absl::node_hash_map<std::string, TenantFlow> tenants_;
  absl::flat_hash_map<uint64_t, JobFlow> jobs_;
  // The start of the last task taken: where returning tenants start.
  double virtual_now_ = 0;
  // The last measured cost of any task: a new job's first estimate.
  double last_cost_seconds_ = 0;
};

}  // namespace stoker

#endif  // STOKER_WORKER_TENANT_FAIR_QUEUE_H_
