#ifndef STOKER_COORDINATOR_SCALE_TARGET_H_
#define STOKER_COORDINATOR_SCALE_TARGET_H_

// What an autoscaler (KEDA's external scaler, coordinator/external_scaler_service.h) is told:
// how many workers a scope of the cluster needs, from the advisor's per-job counts, held steady
// by hysteresis and a cool-down so that noise in the measurements does not flap the pool.
//
// WorkersWanted, for a scope (a pool, a job, a tenant; each may be empty meaning all):
//   - the jobs counted are the running ones (of the scope's job and tenant, if named);
//   - a measured job needs its advice's workers_desired; the counts add up (each job's count is
//     what it needs of a whole worker's capacity);
//   - an unmeasured running job needs at least the workers there are, and at least one (so a
//     pool scaled to zero starts a worker when a job opens);
//   - a pool is asked for what the others do not cover: the total less the live workers of
//     other pools, at least 0.
// No running job: 0 (the pool may scale to zero).
//
// ScaleDecider holds, per scope, the count last reported and when it last changed:
//   - a rise is reported at once, unless the last change was a fall less than `cooldown` ago;
//   - a fall is reported only when at least `hysteresis_workers` below the held count (a fall
//     to 0 always counts) and at least `cooldown` after the last change;
// so the reported count never reverses within the cool-down.

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "stoker/v1/status.pb.h"

namespace stoker {

// Most scopes a ScaleDecider remembers; a new one beyond is RESOURCE_EXHAUSTED.
inline constexpr size_t kMaxScaleScopes = 1024;

struct ScaleScope {
  std::string pool;    // empty: every worker
  std::string job;     // empty: every running job
  std::string tenant;  // empty: jobs of every tenant; else only that tenant's
  bool operator<(const ScaleScope& other) const {
    return std::tie(pool, job, tenant) < std::tie(other.pool, other.job, other.tenant);
  }
};

// Pure; thread-safe. See the header comment.
uint32_t WorkersWanted(const stoker::v1::GetStatusResponse& status, const ScaleScope& scope);

struct ScaleDeciderConfig {
  // A fall smaller than this is ignored (>= 1).
  uint32_t hysteresis_workers = 1;
  // No reversal, and no fall, sooner than this after the last change (>= 0).
  absl::Duration cooldown = absl::Seconds(60);

  // INVALID_ARGUMENT naming the field.
  absl::Status Validate() const;
};

// Thread-safe.
class ScaleDecider {
 public:
  // REQUIRES: config.Validate() is OK; `clock` outlives this object.
  ScaleDecider(ScaleDeciderConfig config, Clock* clock) : config_(config), clock_(clock) {}

  // The count to report for `scope`, whose advised count is `wanted` now. RESOURCE_EXHAUSTED
  // when `scope` is new and kMaxScaleScopes are held.
  absl::StatusOr<uint32_t> Decide(const ScaleScope& scope, uint32_t wanted);

 private:
  struct Held {
    uint32_t count = 0;
    absl::Time changed;
    bool fell = false;  // the last change was a fall
  };

  const ScaleDeciderConfig config_;
  Clock* const clock_;
  absl::Mutex mu_;
  std::map<ScaleScope, Held> held_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_SCALE_TARGET_H_
