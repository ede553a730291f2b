#include "wire/testing/batch_messages.h"

#include <string>

#include "absl/types/span.h"
#include "common/payload_codec.h"

namespace stoker::testing {

std::shared_ptr<v1::BatchMessage> MakeBatchMessage(uint64_t job, uint32_t epoch,
                                                   uint64_t batch_index, uint64_t worker_id,
                                                   int samples, int bytes_per_sample) {
  auto message = std::make_shared<v1::BatchMessage>();
  v1::BatchHeader* header = message->mutable_header();
  header->mutable_task()->set_job_id(job);
  header->mutable_task()->set_epoch(epoch);
  header->mutable_task()->set_batch_index(batch_index);
  for (int i = 0; i < samples; ++i) {
    header->add_sample_indices(batch_index * samples + i);
    header->add_labels(static_cast<int64_t>(batch_index * samples + i) % 10);
  }
  header->add_shape(samples);
  header->add_shape(1);
  header->add_shape(1);
  header->add_shape(bytes_per_sample);
  header->set_dtype(v1::DTYPE_UINT8);
  header->set_layout(v1::LAYOUT_HWC);
  header->set_compression(v1::COMPRESSION_NONE);
  header->set_worker_id(worker_id);
  header->set_produce_seconds(0.5);
  message->set_data(std::string(static_cast<size_t>(samples) * bytes_per_sample,
                                static_cast<char>(batch_index & 0xff)));
  return message;
}

std::shared_ptr<v1::BatchMessage> MakeCompressedBatchMessage(uint64_t job, uint32_t epoch,
                                                             uint64_t batch_index,
                                                             v1::Compression codec) {
  std::shared_ptr<v1::BatchMessage> message = MakeBatchMessage(job, epoch, batch_index);
  v1::CompressionChoice choice;
  choice.set_codec(codec);
  PayloadBuffer encoded;
  const std::string& raw = message->data();
  const absl::Status compressed = CompressPayload(
      choice, absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(raw.data()), raw.size()),
      &encoded);
  if (!compressed.ok()) return nullptr;  // The callers' decoding then fails loudly.
  message->mutable_header()->set_compression(codec);
  message->mutable_header()->set_uncompressed_bytes(raw.size());
  message->set_data(std::string(reinterpret_cast<const char*>(encoded.data()), encoded.size()));
  return message;
}

}  // namespace stoker::testing
