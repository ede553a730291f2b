#include "trainer_client/batch_payload.h"

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

void BatchPayload::CopyTo(uint8_t* out) const {
  for (const Chunk& chunk : chunks_) {
    if (chunk.empty()) continue;
    std::memcpy(out, chunk.data(), chunk.size());
    out += chunk.size();
  }
}

}  // namespace stoker
