#ifndef STOKER_TRAINER_CLIENT_LOADER_OPTIONS_H_
#define STOKER_TRAINER_CLIENT_LOADER_OPTIONS_H_

// What a trainer process tells the Loader: where the coordinator is, which job (name + spec) and
// which rank it is, and how much memory it may spend on prefetching.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/retry.h"
#include "common/tls/tls_config.h"
#include "stoker/v1/coordinator.pb.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

// Thread-compatible value type.
struct LoaderOptions {
  // host:port of the coordinator, or HOST:PORT,HOST:PORT... of its replicas (calls follow the
  // leader; docs/decisions/0075-follow-the-leader.md). Required.
  std::string coordinator_address;
  // The job's name: OpenJob's idempotency key (every rank of a job uses the same name and spec).
  // Required.
  std::string job_name;
  // What to produce; validated by the coordinator (the client checks only world_size and rank).
  // spec.tail says where the pipeline's to_float/normalize tail runs, the one way to ask for it:
  // TAIL_PLACEMENT_CLIENT is "tail to the trainer" (client_tail.h; needs LoaderEnv::tail, else
  // FAILED_PRECONDITION): the pipeline must end in to_float followed only by normalize ops, with
  // no batch_mix; the workers run the ops before that tail with uint8 HWC output (4x fewer bytes
  // than float32 on the wire) and this client runs the tail on each batch in Next(), on the
  // calling thread, giving exactly the batch the workers would have sent. Unset means AUTO where
  // LoaderEnv::tail is set (the coordinator places such a tail here:
  // docs/decisions/0039-tail-placement.md), else WORKER. The coordinator records the placement
  // in the job, so every rank of a job must ask the same.
  v1::JobSpec spec;
  // This trainer's rank, < spec.world_size.
  uint32_t rank = 0;
  // Random id of this client process; a random one is chosen when empty.
  std::string client_id;
  // Budget, in bytes, for batches granted to workers, in flight and buffered here (not those the
  // training loop still holds), split over the worker streams by CreditPolicy (credit_policy.h:
  // at least one batch per stream; a stall's extra credit above it). > 0.
  uint64_t prefetch_bytes = 256ull << 20;
  // Stream only from workers with these addresses (as the coordinator lists them); empty means
  // every live worker.
  std::vector<std::string> only_workers;
  // How often the client reports received tasks and refreshes the worker list. > 0.
  absl::Duration heartbeat_interval = absl::Milliseconds(200);
  // Deadline of each unary call to the coordinator. > 0.
  absl::Duration rpc_timeout = absl::Seconds(10);
  // Retries of OpenJob / the first heartbeat while the coordinator is UNAVAILABLE, and the delay
  // before reconnecting to a worker whose stream failed: capped exponential backoff with jitter.
  // The default keeps trying for about 10-20 s, long enough for a coordinator restart.
  BackoffPolicy connect_backoff = {absl::Milliseconds(50), absl::Seconds(2), 2.0,
                                   /*max_attempts=*/12};
  // Yield each epoch's batches in the rank's plan order (a bounded reorder buffer holds the ones
  // that arrive early; it lives within prefetch_bytes plus the stall's extra credit) instead of
  // in arrival order. A resumed ordered run yields exactly the rest of an uninterrupted one.
  bool ordered = false;
  // Tokens from Loader::ResumeToken() saved with the checkpoint to resume from: with the same
  // world size this rank's token (others are ignored), with another world size the tokens of
  // every rank of the old job (and a job_name not in use). Empty: start at epoch 0.
  std::vector<std::string> resume_tokens;
  // Split credit over the worker streams by their measured delivery rates (credit_policy.h).
  // false keeps even shares: only for measuring what balancing is worth (bench/, tests).
  bool balance_credit = true;
  // The two process-wide tunings below are off by default: a library linked into someone
  // else's trainer changes nothing outside its own objects unless asked (docs/architecture.md,
  // Rules the code keeps). stoker-bench-client, a process of its own, turns both on.
  //
  // Keep freed heap memory in the process (common/heap_tuning.h; measured: 2.5–3× less client
  // CPU on float32 reference batches). The trainer's own frees are retained too.
  bool retain_heap_memory = false;
  // Set GRPC_EXPERIMENTS for this process, unless set already (common/read_wakeup_tuning.h;
  // measured: ~15% less client CPU per float32 image). Every gRPC channel of the process gets
  // the experiments.
  bool tune_read_wakeups = false;
  // TLS of the calls to the coordinator and the worker streams (common/tls/tls_config.h): this
  // trainer's certificate (role trainer) and key, or its bearer token (bearer_token_file), and the
  // CA. Required: the files, or tls.insecure set explicitly; left empty, Validate() fails naming
  // tls.cert_file.
  TlsConfig tls;
  // Payload compression asked of every worker stream
  // (docs/decisions/0029-stream-compression-formats-negotiation-both-sides.md): "none"; "lz4";
  // "zstd" or "zstd:LEVEL" (LEVEL -7..19, default 1); or "auto", which starts raw, measures the
  // link, the workers' compression and this client's decompression on the first batches and picks
  // per stream what delivers the most images per second (compression_auto.h). A worker that does
  // not offer the codec (or predates compression) sends raw payloads.
  std::string compression = "none";

  // OK, or INVALID_ARGUMENT naming the first bad field, e.g.
  // "rank: must be < spec.world_size (2), got 2".
  absl::Status Validate() const;

  // The most payload bytes a batch of the job may carry: its tensor (`job.batch_bytes()`, the
  // coordinator's OpenJob answer) and, with spec.fields, the values of its field columns after it
  // (MaxFieldColumnBytes, common/field_limits.h, the worker's own bound), masks counted at the
  // elements of one sample of job.batch_shape() (at least its height × width whatever the
  // layout). What the worker streams' receive and decode limits are sized by.
  uint64_t MaxBatchPayloadBytes(const stoker::v1::OpenJobResponse& job) const;
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_LOADER_OPTIONS_H_
