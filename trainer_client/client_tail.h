#ifndef STOKER_TRAINER_CLIENT_CLIENT_TAIL_H_
#define STOKER_TRAINER_CLIENT_CLIENT_TAIL_H_

// "Tail to the trainer" (JobSpec.tail = TAIL_PLACEMENT_CLIENT, or AUTO and placed here): when a
// job's pipeline ends in `to_float` followed only by `normalize` ops, the coordinator may place
// that tail on the client (coordinator/tail_placement.h): the workers send the uint8 HWC image
// before it (4x fewer bytes on the wire than float32) and the client runs the tail itself.
//
//   LoaderEnv env;
//   env.tail = ClientTailFactory();   // lets Loader::Open ask for AUTO and run a placed tail
//   ASSIGN_OR_RETURN(std::unique_ptr<Loader> loader, Loader::Open(options, env));
//
// This library (stoker_client_tail) links augment, which the installed client package does not
// ship; hence the factory. The tail is the compiled augment Pipeline the worker would have run,
// so the result is bit for bit what the worker would have sent (tested); it draws no randomness.

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "augment/pipeline.h"
#include "stoker/v1/pipeline.pb.h"
#include "trainer_client/batch.h"
#include "trainer_client/loader_env.h"
#include "wire/message_pool.h"

namespace stoker {

// Thread-safe (Apply serializes on a mutex; one consumer at a time is the common case).
class ClientTail : public BatchTail {
 public:
  // `worker_batch_shape` is [N, H, W, C] of the workers' uint8 HWC batches (OpenJob's
  // batch_shape). INVALID_ARGUMENT when the tail does not compile for that image (e.g. a
  // normalize with another channel count), naming the op.
  static absl::StatusOr<std::unique_ptr<ClientTail>> Create(
      const v1::PipelineSpec& tail, absl::Span<const int64_t> worker_batch_shape);

  // A new batch: `batch`'s header with the tail's dtype, layout and shape, and every sample run
  // through the tail. Its payload comes from a pool (no fresh pages in steady state).
  // INVALID_ARGUMENT when `batch` is not the uint8 HWC batch the tail was compiled for.
  absl::StatusOr<Batch> Apply(const Batch& batch) override;

  // The converted batch's shape and payload bytes.
  absl::Span<const int64_t> batch_shape() const override { return batch_shape_; }
  uint64_t batch_bytes() const override { return batch_bytes_; }

 private:
  ClientTail(Pipeline pipeline, std::vector<int64_t> input_shape);

  const Pipeline pipeline_;
  const std::vector<int64_t> input_shape_;
  const std::vector<int64_t> batch_shape_;
  const uint64_t batch_bytes_;
  const std::shared_ptr<MessagePool> pool_;
  absl::Mutex mu_;
  PipelineWorkspace workspace_ ABSL_GUARDED_BY(mu_);
  // One sample's uint8 bytes when they arrived split across chunks.
  std::vector<uint8_t> scratch_ ABSL_GUARDED_BY(mu_);
};

// ClientTail::Create, for LoaderEnv::tail.
BatchTailFactory ClientTailFactory();

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_CLIENT_TAIL_H_
