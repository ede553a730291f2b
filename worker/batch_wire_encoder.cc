#include "worker/batch_wire_encoder.h"

#include <grpcpp/support/slice.h>

#include <string>
#include <utility>

namespace stoker {
namespace {

// Field 2 (`data`) of BatchMessage, length-delimited: (2 << 3) | 2.
constexpr char kDataTag = 0x12;

// What the payload slice owns.
struct PayloadOwner {
  OutgoingBatch batch;
  MessagePool::Recycler recycle;
  PayloadBufferPool::Recycler recycle_encoded;
};

void ReleasePayload(void* owner) {
  std::unique_ptr<PayloadOwner> released(static_cast<PayloadOwner*>(owner));
  if (released->batch.encoded != nullptr) {
    released->recycle_encoded(std::move(released->batch.encoded));
  }
  released->recycle(std::move(released->batch.message));
}

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

}  // namespace

grpc::ByteBuffer BatchToByteBuffer(OutgoingBatch batch, MessagePool::Recycler recycle,
                                   PayloadBufferPool::Recycler recycle_encoded) {
  // Everything but the payload, serialized by protobuf (the payload is swapped out meanwhile,
  // keeping its capacity with the message).
  stoker::v1::BatchMessage* message = batch.message.get();
  std::string payload;
  message->mutable_data()->swap(payload);
  std::string prefix = message->SerializeAsString();
  message->mutable_data()->swap(payload);
  const size_t size = batch.wire_bytes();
  if (size == 0) {
    grpc::Slice head(prefix);
    if (batch.encoded != nullptr) recycle_encoded(std::move(batch.encoded));
    recycle(std::move(batch.message));
    return grpc::ByteBuffer(&head, 1);
  }
  prefix.push_back(kDataTag);
  AppendVarint(size, &prefix);
  void* bytes = batch.encoded != nullptr ? static_cast<void*>(batch.encoded->data())
                                         : const_cast<char*>(message->data().data());
  auto* owner = new PayloadOwner{std::move(batch), std::move(recycle), std::move(recycle_encoded)};
  const grpc::Slice slices[2] = {grpc::Slice(prefix),
                                 grpc::Slice(bytes, size, &ReleasePayload, owner)};
  return grpc::ByteBuffer(slices, 2);
}

}  // namespace stoker
