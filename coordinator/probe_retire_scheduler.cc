#include "coordinator/probe_retire_scheduler.h"

#include "common/logging.h"

namespace stoker {

void ProbeRetireScheduler::Recovered(uint64_t job_id, bool finished, absl::Time now) {
  if (!finished) next_probe_[job_id] = now;
  heard_[job_id] = now;
}

std::vector<uint64_t> ProbeRetireScheduler::ProbesDue(absl::Time now) const {
  std::vector<uint64_t> due;
  for (const auto& [job_id, next] : next_probe_) {
    if (next <= now) due.push_back(job_id);
  }
  return due;
}

void ProbeRetireScheduler::RecordProbe(uint64_t job_id, const std::string& error, absl::Time now) {
  auto known = data_errors_.find(job_id);
  if (error.empty()) {
    next_probe_.erase(job_id);
    if (known != data_errors_.end()) {
      STOKER_LOG(INFO) << "job " << job_id << ": its dataset opens again";
      data_errors_.erase(known);
    }
    return;
  }
  if (known == data_errors_.end() || known->second != error) {
    STOKER_LOG(WARNING) << error << " (told to its clients; probing again every "
                        << absl::FormatDuration(kProbeInterval) << ")";
  }
  data_errors_[job_id] = error;
  next_probe_[job_id] = now + kProbeInterval;
}

const std::string* ProbeRetireScheduler::DataError(uint64_t job_id) const {
  auto error = data_errors_.find(job_id);
  return error == data_errors_.end() ? nullptr : &error->second;
}

std::vector<uint64_t> ProbeRetireScheduler::IdleJobs(absl::Time now) const {
  std::vector<uint64_t> idle;
  for (const auto& [job_id, heard] : heard_) {
    if (heard + idle_timeout_ <= now) idle.push_back(job_id);
  }
  return idle;
}

void ProbeRetireScheduler::Forget(uint64_t job_id) {
  heard_.erase(job_id);
  next_probe_.erase(job_id);
  data_errors_.erase(job_id);
}

}  // namespace stoker
