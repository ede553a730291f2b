#include "wire/grpc_batch_reader.h"

#include <grpcpp/support/slice.h>

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "wire/batch_wire_splitter.h"

namespace stoker {

absl::StatusOr<ReceivedBatch> ReadBatch(grpc::ByteBuffer* buffer,
                                        std::shared_ptr<v1::BatchMessage> header,
                                        std::shared_ptr<BufferPool> gather_buffers) {
  // References to the received slices, not copies of their bytes.
  auto slices = std::make_shared<std::vector<grpc::Slice>>();
  const grpc::Status dumped = buffer->Dump(slices.get());
  buffer->Clear();
  if (!dumped.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot read a received batch message: ", dumped.error_message()));
  }
  std::vector<BatchPayload::Chunk> views;
  views.reserve(slices->size());
  for (const grpc::Slice& slice : *slices) views.emplace_back(slice.begin(), slice.size());
  ASSIGN_OR_RETURN(BatchWireParts parts, SplitBatchWire(views));
  if (!header->ParseFromString(parts.header_bytes)) {
    return absl::DataLossError("batch message: the fields but data do not parse as a BatchMessage");
  }
  auto payload = std::make_shared<const BatchPayload>(std::move(parts.payload), std::move(slices),
                                                      std::move(gather_buffers));
  return ReceivedBatch{std::move(header), std::move(payload)};
}

}  // namespace stoker
