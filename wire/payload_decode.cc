#include "wire/payload_decode.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/payload_codec.h"
#include "common/status_macros.h"
#include "wire/batch_check.h"
#include "wire/target_check.h"

namespace stoker {
namespace {

absl::StatusOr<DecodedBatch> Decode(ReceivedBatch received, uint64_t max_raw_bytes,
                                    MessagePool* headers, BufferPool* buffers) {
  DecodedBatch decoded;
  const v1::BatchHeader& header = received.header->header();
  decoded.wire_bytes = received.payload->size();
  if (IsRaw(header.compression())) {
    RETURN_IF_ERROR(CheckBatchHeader(header, decoded.wire_bytes));
    RETURN_IF_ERROR(CheckTargetColumns(header, *received.payload));
    decoded.raw_bytes = decoded.wire_bytes;
    decoded.batch = std::move(received);
    return decoded;
  }
  decoded.codec = header.compression();
  const uint64_t raw_bytes = header.uncompressed_bytes();
  if (raw_bytes > max_raw_bytes) {
    return absl::DataLossError(absl::StrCat(
        "header.uncompressed_bytes: a ", CodecName(header.compression()), " payload announces ",
        raw_bytes, " bytes, more than a batch of the job (", max_raw_bytes, ")"));
  }
  // Before the buffer is sized: the frame must then hold exactly what the shape says.
  RETURN_IF_ERROR(CheckBatchHeader(header, raw_bytes));
  const absl::Duration cpu_start = ThreadCpuTime();
  std::shared_ptr<std::string> raw = buffers->Acquire();
  // A recycled buffer already has a batch's size: resize then writes nothing.
  raw->resize(raw_bytes);
  RETURN_IF_ERROR(
      DecompressPayload(header.compression(), received.payload->contiguous(),
                        absl::MakeSpan(reinterpret_cast<uint8_t*>(raw->data()), raw->size())));
  std::shared_ptr<v1::BatchMessage> decoded_header = headers->Acquire();
  decoded_header->clear_data();
  *decoded_header->mutable_header() = header;
  decoded_header->mutable_header()->set_compression(v1::COMPRESSION_NONE);
  const BatchPayload::Chunk bytes(reinterpret_cast<const uint8_t*>(raw->data()), raw->size());
  decoded.batch = {std::move(decoded_header),
                   std::make_shared<const BatchPayload>(bytes, std::move(raw))};
  RETURN_IF_ERROR(CheckTargetColumns(header, *decoded.batch.payload));
  decoded.raw_bytes = raw_bytes;
  decoded.decode_seconds = absl::ToDoubleSeconds(ThreadCpuTime() - cpu_start);
  return decoded;
}

}  // namespace

absl::StatusOr<DecodedBatch> DecodeReceivedBatch(ReceivedBatch received, absl::string_view worker,
                                                 uint64_t max_raw_bytes, MessagePool* headers,
                                                 BufferPool* buffers) {
  const uint64_t batch_index = received.header->header().task().batch_index();
  absl::StatusOr<DecodedBatch> decoded =
      Decode(std::move(received), max_raw_bytes, headers, buffers);
  if (!decoded.ok()) {
    return absl::Status(decoded.status().code(),
                        absl::StrCat("batch ", batch_index, " from worker ", worker, ": ",
                                     decoded.status().message()));
  }
  return decoded;
}

}  // namespace stoker
