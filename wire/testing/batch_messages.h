#ifndef STOKER_WIRE_TESTING_BATCH_MESSAGES_H_
#define STOKER_WIRE_TESTING_BATCH_MESSAGES_H_

// Batch messages as a worker sends them, for tests of the wire and of the trainer client.

#include <cstdint>
#include <memory>

#include "stoker/v1/worker.pb.h"

namespace stoker::testing {

// A BatchMessage for task (job, epoch, batch_index) with `samples` samples of `bytes_per_sample`
// uint8 bytes each (value = batch_index & 0xff), from `worker_id`.
std::shared_ptr<v1::BatchMessage> MakeBatchMessage(uint64_t job, uint32_t epoch,
                                                   uint64_t batch_index, uint64_t worker_id = 1,
                                                   int samples = 2, int bytes_per_sample = 3);

// MakeBatchMessage(job, epoch, batch_index)'s batch with its payload compressed by `codec`
// (header.compression and header.uncompressed_bytes set as a worker sets them).
std::shared_ptr<v1::BatchMessage> MakeCompressedBatchMessage(uint64_t job, uint32_t epoch,
                                                             uint64_t batch_index,
                                                             v1::Compression codec);

}  // namespace stoker::testing

#endif  // STOKER_WIRE_TESTING_BATCH_MESSAGES_H_
