#ifndef STOKER_WIRE_GRPC_BATCH_READER_H_
#define STOKER_WIRE_GRPC_BATCH_READER_H_

// gRPC glue: a Batch from the grpc::ByteBuffer received for a BatchMessage, without the parse
// copy of its payload. The buffer's slices are kept (their bytes are not copied): the Batch's
// payload views them (wire/batch_payload.h) and holds a reference to each until the
// last copy of the Batch is gone. The fields but `data` are parsed by protobuf into a (pooled)
// message (wire/batch_wire_splitter.h).

#include <grpcpp/support/byte_buffer.h>

#include <memory>

#include "absl/status/statusor.h"
#include "stoker/v1/worker.pb.h"
#include "wire/batch_payload.h"
#include "wire/message_pool.h"

namespace stoker {

// Reads `buffer` (left empty) into a Batch whose header is parsed into `header` (cleared first)
// and whose payload is gathered, when a consumer asks for it at one address, into a buffer from
// `gather_buffers` (a fresh one when null). DATA_LOSS as SplitBatchWire says, or when the header
// fields do not parse; INTERNAL when gRPC cannot read the buffer's slices.
absl::StatusOr<ReceivedBatch> ReadBatch(grpc::ByteBuffer* buffer,
                                        std::shared_ptr<v1::BatchMessage> header,
                                        std::shared_ptr<BufferPool> gather_buffers);

}  // namespace stoker

#endif  // STOKER_WIRE_GRPC_BATCH_READER_H_
