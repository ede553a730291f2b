#ifndef STOKER_COORDINATOR_PROBE_RETIRE_SCHEDULER_H_
#define STOKER_COORDINATOR_PROBE_RETIRE_SCHEDULER_H_

// The coordinator's soft state about when to look at a job again, beside ClusterState (which
// the journal replicates): when a client last opened the job or heartbeated for it, so that
// the coordinator retires the job once nobody was heard for idle_timeout; which recovered jobs
// still need their dataset probed, and when; and the last probe's error, which the job's
// clients are told (ClientHeartbeatResponse.data_error).
//
// It decides what is due; the Coordinator does it (the probe's I/O, the journaled retire_job)
// and reports back. Nothing here survives a restart: after one, every job counts as heard at
// the recovery and every unfinished one is probed again.
//
// Thread-compatible: the Coordinator guards it with its mutex.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace stoker {

class ProbeRetireScheduler {
 public:
  // Time between two probes of a job whose dataset failed its probe.
  static constexpr absl::Duration kProbeInterval = absl::Seconds(2);

  // A job none of whose clients was heard for `idle_timeout` is due for retirement.
  explicit ProbeRetireScheduler(absl::Duration idle_timeout) : idle_timeout_(idle_timeout) {}

  // A client opened the job or heartbeated for it at `now`.
  void Heard(uint64_t job_id, absl::Time now) { heard_[job_id] = now; }
  // The job was recovered from the journal at `now`: it counts as heard then (its clients get
  // a full idle_timeout, as workers get a full worker_timeout), and unless it is finished its
  // dataset is probed from `now` on.
  void Recovered(uint64_t job_id, bool finished, absl::Time now);

  // The jobs whose probe is due at `now`, in id order.
  std::vector<uint64_t> ProbesDue(absl::Time now) const;
  // Records the outcome of the job's probe at `now`: an empty `error` means the dataset opened
  // and matched, so the job is not probed again and its error is cleared; otherwise the error
  // is kept for its clients and the next probe is due at now + kProbeInterval. Logs a change.
  void RecordProbe(uint64_t job_id, const std::string& error, absl::Time now);
  // The job's last probe error; nullptr when it has none.
  const std::string* DataError(uint64_t job_id) const;

  // The jobs none of whose clients was heard for idle_timeout at `now`, in id order.
  std::vector<uint64_t> IdleJobs(absl::Time now) const;
  // Forgets everything about the job (it was retired, or is gone).
  void Forget(uint64_t job_id);

 private:
  const absl::Duration idle_timeout_;
  std::map<uint64_t, absl::Time> heard_;       // by job: last open or client heartbeat
  std::map<uint64_t, absl::Time> next_probe_;  // recovered jobs not yet probed successfully
  std::map<uint64_t, std::string> data_errors_;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_PROBE_RETIRE_SCHEDULER_H_
