#include "plan/rank_sequence.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "plan/epoch_plan.h"

namespace stoker {

RankSequence::RankSequence(uint32_t rank, uint32_t world_size, uint64_t batches_per_rank,
                           uint32_t epochs)
    : rank_(rank), world_size_(world_size), batches_per_rank_(batches_per_rank), epochs_(epochs) {}

RankSequence RankSequence::Resumed(uint32_t rank, uint32_t world_size, uint64_t batches_per_rank,
                                   uint32_t epochs, uint32_t first_epoch,
                                   std::vector<uint64_t> first_batches) {
  RankSequence sequence(rank, world_size, batches_per_rank, epochs);
  auto first = std::make_shared<FirstEpoch>();
  first->batches = std::move(first_batches);
  first->positions.reserve(first->batches.size());
  for (uint64_t i = 0; i < first->batches.size(); ++i)
    first->positions.emplace(first->batches[i], i);
  sequence.first_epoch_ = first_epoch;
  sequence.first_ = std::move(first);
  return sequence;
}

absl::Status RankSequence::CheckResumed(absl::string_view field) const {
  if (first_ == nullptr) return absl::OkStatus();
  const uint64_t limit = BatchIndexLimit(batches_per_rank_ * world_size_, world_size_);
  for (uint64_t i = 0; i < first_->batches.size(); ++i) {
    const uint64_t g = first_->batches[i];
    if (g >= limit || first_->positions.at(g) != i) {
      return absl::InvalidArgumentError(absl::StrCat(field, "[", i, "]: batch ", g,
                                                     " is listed twice or past the limit ", limit));
    }
  }
  return absl::OkStatus();
}

const std::vector<uint64_t>& RankSequence::first_batches() const {
  static const std::vector<uint64_t>* const kNone = new std::vector<uint64_t>();
  return first_ == nullptr ? *kNone : first_->batches;
}

uint64_t RankSequence::BatchesIn(uint32_t epoch) const {
  if (epoch < first_epoch_ || epoch >= epochs_) return 0;
  if (first_ != nullptr && epoch == first_epoch_) return first_->batches.size();
  return batches_per_rank_;
}

uint64_t RankSequence::size() const {
  if (first_epoch_ >= epochs_) return 0;
  const uint64_t first = first_ != nullptr ? first_->batches.size() : batches_per_rank_;
  return first + batches_per_rank_ * (epochs_ - first_epoch_ - 1);
}

uint64_t RankSequence::BatchAt(uint32_t epoch, uint64_t position) const {
  if (first_ != nullptr && epoch == first_epoch_) return first_->batches[position];
  return GlobalBatchIndex(rank_, position, world_size_);
}

std::optional<uint64_t> RankSequence::PositionOf(uint32_t epoch, uint64_t g) const {
  if (epoch < first_epoch_ || epoch >= epochs_) return std::nullopt;
  if (first_ != nullptr && epoch == first_epoch_) {
    auto it = first_->positions.find(g);
    if (it == first_->positions.end()) return std::nullopt;
    return it->second;
  }
  if (RankOfBatch(g, world_size_) != rank_ || g / world_size_ >= batches_per_rank_) {
    return std::nullopt;
  }
  return g / world_size_;
}

RankSequence::Task RankSequence::TaskAt(uint64_t seq) const {
  uint32_t epoch = first_epoch_;
  if (first_ != nullptr) {
    if (seq < first_->batches.size()) return Task{first_epoch_, first_->batches[seq]};
    seq -= first_->batches.size();
    ++epoch;
  }
  epoch += static_cast<uint32_t>(seq / batches_per_rank_);
  return Task{epoch, GlobalBatchIndex(rank_, seq % batches_per_rank_, world_size_)};
}

std::optional<uint64_t> RankSequence::SeqOf(uint32_t epoch, uint64_t g) const {
  const std::optional<uint64_t> position = PositionOf(epoch, g);
  if (!position.has_value()) return std::nullopt;
  if (first_ == nullptr) return uint64_t{epoch} * batches_per_rank_ + *position;
  if (epoch == first_epoch_) return *position;
  return first_->batches.size() + uint64_t{epoch - first_epoch_ - 1} * batches_per_rank_ +
         *position;
}

}  // namespace stoker
