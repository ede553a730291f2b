#include "trainer_client/epoch_buffer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

namespace stoker {

EpochBuffer::EpochBuffer(const Config& config) : config_(config) {
  AdvanceEpochIfComplete();  // an empty plan (0 batches per epoch) is done at once
}

bool EpochBuffer::IsOurs(const Batch& batch) const {
  const uint64_t world = std::max<uint32_t>(1, config_.world_size);
  return batch.job_id() == config_.job_id && batch.epoch() < config_.epochs &&
         batch.batch_index() % world == config_.rank &&
         batch.batch_index() / world < config_.batches_per_epoch;
}

void EpochBuffer::AddStream(StreamId id, uint32_t share) { accounts_[id] = Account{share, 0, 0}; }

void EpochBuffer::SetShare(StreamId id, uint32_t share) {
  auto it = accounts_.find(id);
  if (it != accounts_.end()) it->second.share = share;
}

void EpochBuffer::RemoveStream(StreamId id) { accounts_.erase(id); }

uint32_t EpochBuffer::outstanding(StreamId id) const {
  auto it = accounts_.find(id);
  return it == accounts_.end() ? 0 : it->second.outstanding;
}

uint32_t EpochBuffer::held(StreamId id) const {
  auto it = accounts_.find(id);
  return it == accounts_.end() ? 0 : it->second.held;
}

EpochBuffer::AddResult EpochBuffer::Add(StreamId stream, Batch batch) {
  auto account = accounts_.find(stream);
  if (account != accounts_.end() && account->second.outstanding > 0) {
    --account->second.outstanding;
  }
  const uint32_t epoch = batch.epoch();
  const uint64_t index = batch.batch_index();
  if (!IsOurs(batch)) return AddResult::kInvalid;
  if (epoch < current_epoch_) return AddResult::kDuplicate;
  EpochSlot& slot = epochs_[epoch];
  if (!slot.seen.insert(index).second) return AddResult::kDuplicate;
  slot.queue.push_back(Entry{stream, std::move(batch)});
  ++buffered_;
  if (epoch > current_epoch_) ++later_buffered_;
  ++accepted_total_;
  if (account != accounts_.end()) ++account->second.held;
  return AddResult::kAccepted;
}

bool EpochBuffer::has_ready() const {
  auto it = epochs_.find(current_epoch_);
  return it != epochs_.end() && !it->second.queue.empty();
}

uint64_t EpochBuffer::remaining_in_epoch() const {
  return done() ? 0 : config_.batches_per_epoch - handed_out_in_epoch_;
}

std::optional<Batch> EpochBuffer::Pop() {
  auto it = epochs_.find(current_epoch_);
  if (done() || it == epochs_.end() || it->second.queue.empty()) return std::nullopt;
  Entry entry = std::move(it->second.queue.front());
  it->second.queue.pop_front();
  --buffered_;
  auto account = accounts_.find(entry.stream);
  if (account != accounts_.end() && account->second.held > 0) --account->second.held;
  ++handed_out_in_epoch_;
  AdvanceEpochIfComplete();
  return std::move(entry.batch);
}

void EpochBuffer::AdvanceEpochIfComplete() {
  while (!done() && handed_out_in_epoch_ >= config_.batches_per_epoch) {
    epochs_.erase(current_epoch_);
    ++current_epoch_;
    handed_out_in_epoch_ = 0;
    auto next = epochs_.find(current_epoch_);
    if (next != epochs_.end()) later_buffered_ -= next->second.queue.size();
  }
  if (done()) epochs_.clear();
}

void EpochBuffer::UpdateStall(bool consumer_waiting, absl::Time now) {
  const bool stalled = consumer_waiting && !done() && !has_ready() && later_buffered_ > 0;
  if (!stalled) {
    stall_start_.reset();
    extra_ = 0;
    return;
  }
  if (!stall_start_) stall_start_ = now;
  const double seconds = absl::ToDoubleSeconds(now - *stall_start_);
  uint32_t extra = 1;
  if (seconds >= 1.0) extra = 2 + static_cast<uint32_t>(std::floor(std::log2(seconds)));
  extra_ = std::max(extra_, extra);
}

uint64_t EpochBuffer::committed() const {
  uint64_t total = buffered_;
  for (const auto& [id, account] : accounts_) total += account.outstanding;
  return total;
}

std::vector<uint64_t> EpochBuffer::MissingInCurrentEpoch(size_t max) const {
  std::vector<uint64_t> missing;
  if (done()) return missing;
  auto it = epochs_.find(current_epoch_);
  const uint64_t world = std::max<uint32_t>(1, config_.world_size);
  for (uint64_t k = 0; k < config_.batches_per_epoch && missing.size() < max; ++k) {
    const uint64_t index = k * world + config_.rank;
    if (it == epochs_.end() || !it->second.seen.contains(index)) missing.push_back(index);
  }
  return missing;
}

std::vector<CreditGrant> EpochBuffer::TakeCreditGrants(bool consumer_waiting, absl::Time now) {
  UpdateStall(consumer_waiting, now);
  std::vector<CreditGrant> grants;
  // Byte budget: room left under the cap (unlimited without one).
  uint64_t room = UINT64_MAX;
  if (budget_ > 0) {
    const uint64_t streams = accounts_.size();
    const uint64_t cap = std::max<uint64_t>(budget_, streams) + uint64_t{extra_} * streams;
    const uint64_t used = committed();
    room = cap > used ? cap - used : 0;
  }
  for (auto& [id, account] : accounts_) {
    const uint64_t target = static_cast<uint64_t>(account.share) + extra_;
    const uint64_t have = static_cast<uint64_t>(account.outstanding) + account.held;
    if (have >= target || room == 0) continue;
    const uint32_t owed = static_cast<uint32_t>(std::min(target - have, room));
    room -= owed;
    account.outstanding += owed;
    grants.push_back(CreditGrant{id, owed});
  }
  return grants;
}

}  // namespace stoker
