#ifndef STOKER_TRAINER_CLIENT_MESSAGE_POOL_H_
#define STOKER_TRAINER_CLIENT_MESSAGE_POOL_H_

// The client's pools (trainer_client/object_pool.h): batch headers are parsed into recycled
// messages, and payloads that arrive in several pieces are gathered into recycled buffers
// (trainer_client/batch_payload.h).

#include <string>

#include "stoker/v1/worker.pb.h"
#include "trainer_client/object_pool.h"

namespace stoker {

using MessagePool = ObjectPool<v1::BatchMessage>;
using BufferPool = ObjectPool<std::string>;

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_MESSAGE_POOL_H_
