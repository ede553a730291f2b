#ifndef STOKER_WIRE_MESSAGE_POOL_H_
#define STOKER_WIRE_MESSAGE_POOL_H_

// The pools of batch messages and buffers (common/recycling_pool.h, objects handed out with
// Acquire), one name on both ends: the worker builds batches in recycled messages whose payload
// strings keep their capacity; the client parses headers into recycled messages and gathers
// payloads that arrive in several pieces into recycled buffers (wire/batch_payload.h).

#include <string>

#include "common/recycling_pool.h"
#include "stoker/v1/worker.pb.h"

namespace stoker {

using MessagePool = RecyclingPool<v1::BatchMessage>;
using BufferPool = RecyclingPool<std::string>;

}  // namespace stoker

#endif  // STOKER_WIRE_MESSAGE_POOL_H_
