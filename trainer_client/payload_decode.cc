#include "trainer_client/payload_decode.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/payload_codec.h"

namespace stoker {

absl::StatusOr<DecodedBatch> DecodeReceivedBatch(std::shared_ptr<v1::BatchMessage> message,
                                                 uint64_t max_raw_bytes, MessagePool* pool) {
  DecodedBatch decoded;
  const v1::BatchHeader& header = message->header();
  decoded.wire_bytes = message->data().size();
  if (IsRaw(header.compression())) {
    decoded.raw_bytes = decoded.wire_bytes;
    decoded.message = std::move(message);
    return decoded;
  }
  decoded.codec = header.compression();
  const uint64_t raw_bytes = header.uncompressed_bytes();
  if (raw_bytes > max_raw_bytes) {
    return absl::DataLossError(
        absl::StrCat("a ", CodecName(header.compression()), " payload announces ", raw_bytes,
                     " bytes, more than a batch of the job (", max_raw_bytes, ")"));
  }
  const absl::Duration cpu_start = ThreadCpuTime();
  std::shared_ptr<v1::BatchMessage> out = pool->Acquire();
  // A recycled message's buffer already has a batch's size: resize then writes nothing.
  std::string* data = out->mutable_data();
  data->resize(raw_bytes);
  const std::string& encoded = message->data();
  if (absl::Status status = DecompressPayload(
          header.compression(),
          absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size()),
          absl::MakeSpan(reinterpret_cast<uint8_t*>(data->data()), data->size()));
      !status.ok()) {
    return status;
  }
  out->mutable_header()->Swap(message->mutable_header());
  out->mutable_header()->set_compression(v1::COMPRESSION_NONE);
  decoded.raw_bytes = raw_bytes;
  decoded.decode_seconds = absl::ToDoubleSeconds(ThreadCpuTime() - cpu_start);
  decoded.message = std::move(out);
  return decoded;
}

}  // namespace stoker
