#include "worker/outgoing_batch.h"

#include <utility>

#include "common/clock.h"

namespace stoker {

uint64_t OutgoingBatch::wire_bytes() const {
  if (encoded != nullptr) return encoded->size();
  return message == nullptr ? 0 : message->data().size();
}

uint64_t OutgoingBatch::raw_bytes() const {
  return message == nullptr ? 0 : message->data().size();
}

absl::StatusOr<OutgoingBatch> EncodeBatch(std::unique_ptr<v1::BatchMessage> message,
                                          const v1::CompressionChoice& choice,
                                          PayloadBufferPool* pool) {
  OutgoingBatch batch;
  v1::BatchHeader* header = message->mutable_header();
  if (IsRaw(choice.codec())) {
    header->set_compression(v1::COMPRESSION_NONE);
    header->clear_uncompressed_bytes();
    header->clear_compress_seconds();
    batch.message = std::move(message);
    return batch;
  }
  const absl::Duration cpu_start = ThreadCpuTime();
  std::unique_ptr<PayloadBuffer> encoded = pool->Get();
  const std::string& raw = message->data();
  const absl::Status status = CompressPayload(
      choice, absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(raw.data()), raw.size()),
      encoded.get());
  if (!status.ok()) return status;
  header->set_compression(choice.codec());
  header->set_uncompressed_bytes(raw.size());
  header->set_compress_seconds(absl::ToDoubleSeconds(ThreadCpuTime() - cpu_start));
  batch.message = std::move(message);
  batch.encoded = std::move(encoded);
  return batch;
}

}  // namespace stoker
