#include "worker/batch_wire.h"

#include <grpcpp/support/slice.h>

#include <string>
#include <utility>

namespace stoker {
namespace {

// Field 2 (`data`) of BatchMessage, length-delimited: (2 << 3) | 2.
constexpr char kDataTag = 0x12;

// What the payload slice owns.
struct PayloadOwner {
  std::unique_ptr<stoker::v1::BatchMessage> message;
  BatchMessagePool::Recycler recycle;
};

void ReleasePayload(void* owner) {
  std::unique_ptr<PayloadOwner> released(static_cast<PayloadOwner*>(owner));
  released->recycle(std::move(released->message));
}

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

}  // namespace

grpc::ByteBuffer BatchToByteBuffer(std::unique_ptr<stoker::v1::BatchMessage> message,
                                   BatchMessagePool::Recycler recycle) {
  // Everything but the payload, serialized by protobuf (the payload is swapped out meanwhile,
  // keeping its capacity with the message).
  std::string payload;
  message->mutable_data()->swap(payload);
  std::string prefix = message->SerializeAsString();
  message->mutable_data()->swap(payload);
  const std::string& data = message->data();
  if (data.empty()) {
    grpc::Slice head(prefix);
    recycle(std::move(message));
    return grpc::ByteBuffer(&head, 1);
  }
  prefix.push_back(kDataTag);
  AppendVarint(data.size(), &prefix);
  void* bytes = const_cast<char*>(data.data());
  const size_t size = data.size();
  auto* owner = new PayloadOwner{std::move(message), std::move(recycle)};
  const grpc::Slice slices[2] = {grpc::Slice(prefix),
                                 grpc::Slice(bytes, size, &ReleasePayload, owner)};
  return grpc::ByteBuffer(slices, 2);
}

}  // namespace stoker
