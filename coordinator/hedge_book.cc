#include "coordinator/hedge_book.h"

namespace stoker {

HedgeBook::Key HedgeBook::KeyOf(const stoker::v1::TaskId& task) {
  return {task.job_id(), task.epoch(), task.batch_index()};
}

std::optional<uint64_t> HedgeBook::HedgeIfLeased(const ClusterState& state,
                                                 const stoker::v1::TaskId& task, uint32_t rank) {
  const std::optional<uint64_t> holder = state.LeaseHolder(task);
  if (!holder.has_value() || !hedged_.try_emplace(KeyOf(task), task).second) return std::nullopt;
  queues_[{task.job_id(), rank}].push_back(Entry{task, *holder});
  ++hedged_total_;
  return holder;
}

std::vector<stoker::v1::TaskId> HedgeBook::TakeBackups(const ClusterState& state, uint64_t job_id,
                                                       uint32_t rank, uint64_t worker, size_t max) {
  const auto stale = [&state](const stoker::v1::TaskId& task) {
    return state.IsTaskDone(task) || !state.LeaseHolder(task).has_value();
  };
  std::vector<stoker::v1::TaskId> taken;
  auto queue = queues_.find({job_id, rank});
  if (queue == queues_.end()) return taken;
  std::deque<Entry>& entries = queue->second;
  for (auto it = entries.begin(); it != entries.end() && taken.size() < max;) {
    if (stale(it->task)) {
      it = entries.erase(it);
    } else if (it->holder != worker) {
      taken.push_back(it->task);
      it = entries.erase(it);
    } else {
      ++it;
    }
  }
  if (entries.empty()) queues_.erase(queue);
  return taken;
}

void HedgeBook::PruneStale(const ClusterState& state) {
  const auto done = [&state](const stoker::v1::TaskId& task) {
    return state.IsTaskDone(task) || state.FindJob(task.job_id()) == nullptr;
  };
  for (auto it = hedged_.begin(); it != hedged_.end();) {
    it = done(it->second) ? hedged_.erase(it) : std::next(it);
  }
  for (auto queue = queues_.begin(); queue != queues_.end();) {
    std::deque<Entry>& entries = queue->second;
    for (auto it = entries.begin(); it != entries.end();) {
      it = done(it->task) ? entries.erase(it) : std::next(it);
    }
    queue = entries.empty() ? queues_.erase(queue) : std::next(queue);
  }
}

size_t HedgeBook::queued() const {
  size_t total = 0;
  for (const auto& [key, entries] : queues_) total += entries.size();
  return total;
}

}  // namespace stoker
