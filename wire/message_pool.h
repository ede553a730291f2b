#ifndef STOKER_WIRE_MESSAGE_POOL_H_
#define STOKER_WIRE_MESSAGE_POOL_H_

// The client's pools (common/recycling_pool.h, objects handed out with Acquire): batch headers
// are parsed into recycled messages, and payloads that arrive in several pieces are gathered into
// recycled buffers (wire/batch_payload.h).

#include <string>

#include "common/recycling_pool.h"
#include "stoker/v1/worker.pb.h"

namespace stoker {

using MessagePool = RecyclingPool<v1::BatchMessage>;
using BufferPool = RecyclingPool<std::string>;

}  // namespace stoker

#endif  // STOKER_WIRE_MESSAGE_POOL_H_
