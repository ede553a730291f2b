#include "wire/batch_payload.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace stoker {
namespace {

size_t TotalSize(absl::Span<const BatchPayload::Chunk> chunks) {
  size_t size = 0;
  for (const BatchPayload::Chunk& chunk : chunks) size += chunk.size();
  return size;
}

}  // namespace

BatchPayload::BatchPayload(std::vector<Chunk> chunks, std::shared_ptr<const void> owner,
                           std::shared_ptr<BufferPool> buffers)
    : chunks_(std::move(chunks)),
      owner_(std::move(owner)),
      buffers_(std::move(buffers)),
      size_(TotalSize(chunks_)) {}

BatchPayload::BatchPayload(Chunk bytes, std::shared_ptr<const void> owner)
    : BatchPayload(std::vector<Chunk>{bytes}, std::move(owner), nullptr) {}

absl::Span<const uint8_t> BatchPayload::contiguous() const {
  static constexpr uint8_t kEmpty[1] = {0};
  if (size_ == 0) return absl::Span<const uint8_t>(kEmpty, 0);
  if (chunks_.size() == 1) return chunks_[0];
  absl::call_once(gather_once_, [this] {
    gathered_ = buffers_ != nullptr ? buffers_->Acquire() : std::make_shared<std::string>();
    // clear + append: a recycled buffer's capacity is reused and nothing is zero-filled first.
    gathered_->clear();
    gathered_->reserve(size_);
    for (const Chunk& chunk : chunks_) {
      gathered_->append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
    }
  });
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(gathered_->data()), size_);
}

void BatchPayload::CopyTo(uint8_t* out, size_t n) const {
  for (const Chunk& chunk : chunks_) {
    if (n == 0) return;
    const size_t piece = std::min(n, chunk.size());
    if (piece == 0) continue;
    std::memcpy(out, chunk.data(), piece);
    out += piece;
    n -= piece;
  }
}

void BatchPayload::AppendFrom(size_t offset, std::string* out) const {
  for (const Chunk& chunk : chunks_) {
    if (offset >= chunk.size()) {
      offset -= chunk.size();
      continue;
    }
    out->append(reinterpret_cast<const char*>(chunk.data()) + offset, chunk.size() - offset);
    offset = 0;
  }
}

void PayloadCursor::SkipExhausted() {
  while (chunk_ < chunks_.size() && offset_ == chunks_[chunk_].size()) {
    ++chunk_;
    offset_ = 0;
  }
}

const uint8_t* PayloadCursor::Next(size_t size, uint8_t* scratch) {
  SkipExhausted();
  if (chunk_ < chunks_.size() && chunks_[chunk_].size() - offset_ >= size) {
    const uint8_t* piece = chunks_[chunk_].data() + offset_;
    offset_ += size;
    return piece;
  }
  for (size_t copied = 0; copied < size;) {
    SkipExhausted();
    const BatchPayload::Chunk& chunk = chunks_[chunk_];
    const size_t take = std::min(size - copied, chunk.size() - offset_);
    std::memcpy(scratch + copied, chunk.data() + offset_, take);
    copied += take;
    offset_ += take;
  }
  return scratch;
}

ReceivedBatch ReceivedBatch::FromMessage(std::shared_ptr<const v1::BatchMessage> message) {
  if (message == nullptr) return {};
  const std::string& data = message->data();
  auto payload = std::make_shared<const BatchPayload>(
      BatchPayload::Chunk(reinterpret_cast<const uint8_t*>(data.data()), data.size()), message);
  return {std::move(message), std::move(payload)};
}

}  // namespace stoker
