#ifndef STOKER_WORKER_BATCH_WIRE_ENCODER_H_
#define STOKER_WORKER_BATCH_WIRE_ENCODER_H_

// gRPC glue: a BatchMessage's wire form without the serialization copy of its payload
// (docs/architecture.md, Protocol: the payload is copied at most once on each side).
//
// Protobuf's own serializer copies the whole message, payload included, into gRPC slices. Here
// every field but `data` is serialized by protobuf (the header, and any field added later) into
// one small slice, followed by field 2's tag and length, and then one slice that points at the
// payload string where the producer wrote it (or at the compressed payload, outgoing_batch.h) and
// owns the message (and the compressed buffer): when gRPC drops its last reference to that slice
// (the transport has written the bytes to the socket), they go back to their pools. The bytes are
// those of message.SerializeAsString() with `data` moved last, which every protobuf parser accepts
// (fields may come in any order), so clients need nothing new. Stoker's own client keeps the
// received slices and copies the payload once, where its consumer needs it
// (wire/batch_payload.h): one copy there, none here.

#include <grpcpp/support/byte_buffer.h>

#include <memory>

#include "stoker/v1/worker.pb.h"
#include "worker/batch_producer.h"
#include "worker/outgoing_batch.h"

namespace stoker {

// The serialized batch, its `data` being batch.encoded when set, else the message's own;
// `recycle` receives the message and `recycle_encoded` the encoded buffer once gRPC is done with
// the buffer and every copy of it (on whichever thread drops the last reference).
grpc::ByteBuffer BatchToByteBuffer(OutgoingBatch batch, MessagePool::Recycler recycle,
                                   PayloadBufferPool::Recycler recycle_encoded);

}  // namespace stoker

#endif  // STOKER_WORKER_BATCH_WIRE_ENCODER_H_
