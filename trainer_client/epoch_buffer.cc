#include "trainer_client/epoch_buffer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

namespace stoker {

namespace {

RankSequence SequenceOf(const EpochBuffer::Config& config) {
  const uint32_t world_size = std::max<uint32_t>(1, config.world_size);
  if (!config.resumed) {
    return RankSequence(config.rank, world_size, config.batches_per_epoch, config.epochs);
  }
  return RankSequence::Resumed(config.rank, world_size, config.batches_per_epoch, config.epochs,
                               config.first_epoch, config.first_deal);
}

}  // namespace

EpochBuffer::EpochBuffer(const Config& config) : config_(config), sequence_(SequenceOf(config)) {
  if (config_.resumed) {
    current_epoch_ = std::min(config_.first_epoch, config_.epochs);
    for (uint64_t i = 0; i < config_.first_deal.size(); ++i) {
      if (!ConsumedBeforeResume(config_.first_epoch, i)) ++first_epoch_batches_;
    }
  }
  StartEpoch();
  AdvanceEpochIfComplete();  // an empty plan (0 batches per epoch) is done at once
}

bool EpochBuffer::ConsumedBeforeResume(uint32_t epoch, uint64_t position) const {
  return config_.resumed && epoch == config_.first_epoch &&
         position < config_.first_consumed.size() && config_.first_consumed[position];
}

uint64_t EpochBuffer::BatchesIn(uint32_t epoch) const {
  if (config_.resumed && epoch == config_.first_epoch) return first_epoch_batches_;
  return sequence_.BatchesIn(epoch);
}

uint64_t EpochBuffer::expected_total() const {
  // The sequence minus the batches its resumed first epoch returned before the resume.
  const uint32_t first = config_.first_epoch;
  return sequence_.size() - (sequence_.BatchesIn(first) - BatchesIn(first));
}

void EpochBuffer::StartEpoch() {
  handed_out_in_epoch_ = 0;
  next_position_ = 0;
  returned_ahead_.clear();
  if (done() || !config_.resumed || current_epoch_ != config_.first_epoch) return;
  const uint64_t batches =
      std::min<uint64_t>(sequence_.BatchesIn(current_epoch_), config_.first_consumed.size());
  for (uint64_t i = 0; i < batches; ++i) {
    if (config_.first_consumed[i]) MarkReturned(i);
  }
}

bool EpochBuffer::Returned(uint64_t position) const {
  return position < next_position_ || returned_ahead_.count(position) > 0;
}

void EpochBuffer::MarkReturned(uint64_t position) {
  if (position != next_position_) {
    returned_ahead_.insert(position);
    return;
  }
  ++next_position_;
  while (!returned_ahead_.empty() && *returned_ahead_.begin() == next_position_) {
    returned_ahead_.erase(returned_ahead_.begin());
    ++next_position_;
  }
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
  if (batch.job_id() != config_.job_id || epoch >= config_.epochs) return AddResult::kInvalid;
  if (epoch < current_epoch_) return AddResult::kDuplicate;
  const std::optional<uint64_t> position = sequence_.PositionOf(epoch, index);
  if (!position.has_value()) return AddResult::kInvalid;
  // Returned before the resume: a late batch of the previous incarnation.
  if (epoch == current_epoch_ && Returned(*position)) return AddResult::kDuplicate;
  EpochSlot& slot = epochs_[epoch];
  if (!slot.seen.insert(index).second) return AddResult::kDuplicate;
  if (config_.ordered) {
    slot.by_position.emplace(*position, Entry{stream, std::move(batch)});
  } else {
    slot.queue.push_back(Entry{stream, std::move(batch)});
  }
  ++buffered_;
  if (epoch > current_epoch_) ++later_buffered_;
  ++accepted_total_;
  if (account != accounts_.end()) ++account->second.held;
  return AddResult::kAccepted;
}

bool EpochBuffer::has_ready() const {
  auto it = epochs_.find(current_epoch_);
  if (it == epochs_.end()) return false;
  if (!config_.ordered) return !it->second.queue.empty();
  return it->second.by_position.count(next_position_) > 0;
}

uint64_t EpochBuffer::remaining_in_epoch() const {
  return done() ? 0 : BatchesIn(current_epoch_) - handed_out_in_epoch_;
}

std::optional<Batch> EpochBuffer::Pop() {
  if (done() || !has_ready()) return std::nullopt;
  EpochSlot& slot = epochs_[current_epoch_];
  Entry entry;
  if (config_.ordered) {
    auto it = slot.by_position.find(next_position_);
    entry = std::move(it->second);
    slot.by_position.erase(it);
  } else {
    entry = std::move(slot.queue.front());
    slot.queue.pop_front();
  }
  --buffered_;
  auto account = accounts_.find(entry.stream);
  if (account != accounts_.end() && account->second.held > 0) --account->second.held;
  const std::optional<uint64_t> position =
      sequence_.PositionOf(current_epoch_, entry.batch.batch_index());
  MarkReturned(*position);
  ++handed_out_in_epoch_;
  AdvanceEpochIfComplete();
  return std::move(entry.batch);
}

EpochBuffer::Progress EpochBuffer::progress() const {
  Progress out;
  out.epoch = current_epoch_;
  if (done()) return out;
  out.prefix = next_position_;
  for (uint64_t position : returned_ahead_) {
    out.other.push_back(sequence_.BatchAt(current_epoch_, position));
  }
  std::sort(out.other.begin(), out.other.end());
  return out;
}

void EpochBuffer::AdvanceEpochIfComplete() {
  while (!done() && handed_out_in_epoch_ >= BatchesIn(current_epoch_)) {
    epochs_.erase(current_epoch_);
    ++current_epoch_;
    StartEpoch();
    auto next = epochs_.find(current_epoch_);
    if (next != epochs_.end()) {
      later_buffered_ -= next->second.queue.size() + next->second.by_position.size();
    }
  }
  if (done()) epochs_.clear();
}

void EpochBuffer::UpdateStall(bool consumer_waiting, absl::Time now) {
  // Nothing ready but something buffered: later epochs, or (ordered) later positions.
  const bool stalled = consumer_waiting && !done() && !has_ready() && buffered_ > 0;
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
  const uint64_t positions = sequence_.BatchesIn(current_epoch_);
  for (uint64_t p = 0; p < positions && missing.size() < max; ++p) {
    // Batches returned before the resume are not expected again.
    if (ConsumedBeforeResume(current_epoch_, p)) continue;
    const uint64_t index = sequence_.BatchAt(current_epoch_, p);
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
