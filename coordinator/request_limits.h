#ifndef STOKER_COORDINATOR_REQUEST_LIMITS_H_
#define STOKER_COORDINATOR_REQUEST_LIMITS_H_

// The coordinator's limits on what one request may make it do (docs/security.md, "Limits"):
// every quantity of a request that sizes memory or time is checked against its
// CoordinatorConfig limit here, before anything is sized by it (before a dataset is opened, a
// resume token read or the lock taken). Each error is INVALID_ARGUMENT starting with the field
// and naming the flag: "spec.world_size: 4000000000, over the limit of 16384 (--max-world-size)".
//
// Lists bounded only by the request's size (--max-request-bytes) cost time linear in it and no
// more memory than the request: delivered and returned tasks of a WorkerHeartbeat, consumed
// tasks of a ClientHeartbeat (only the first kMaxOverdue overdue tasks are looked at).
//
// Pure functions; thread-safe.

#include "absl/status/status.h"
#include "coordinator/coordinator_config.h"
#include "stoker/v1/coordinator.pb.h"

namespace stoker {

// Name, pipeline length, world size, epochs, batch size and the number of resume tokens (at
// most one per rank of the checkpoint: --max-world-size).
absl::Status CheckOpenJobLimits(const stoker::v1::OpenJobRequest& request,
                                const CoordinatorConfig& config);
// The address and hybrid_client_id (--max-id-bytes), the pool name (common/pool_name.h).
absl::Status CheckRegisterWorkerLimits(const stoker::v1::RegisterWorkerRequest& request,
                                       const CoordinatorConfig& config);
// The jobs it holds and its per-job rates: at most --max-jobs entries each.
absl::Status CheckWorkerHeartbeatLimits(const stoker::v1::WorkerHeartbeatRequest& request,
                                        const CoordinatorConfig& config);
// The client id (--max-id-bytes) and the spans it ships (trace/trace_proto.h: "trace.*").
absl::Status CheckClientHeartbeatLimits(const stoker::v1::ClientHeartbeatRequest& request,
                                        const CoordinatorConfig& config);

}  // namespace stoker

#endif  // STOKER_COORDINATOR_REQUEST_LIMITS_H_
