#include "trainer_client/epoch_buffer.h"

#include <algorithm>
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

EpochBuffer::AddResult EpochBuffer::Add(StreamId stream, Batch batch) {
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
  ++accepted_total_;
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

std::optional<Batch> EpochBuffer::Pop(StreamId* stream) {
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
  if (stream != nullptr) *stream = entry.stream;
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
  }
  if (done()) epochs_.clear();
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

}  // namespace stoker
