#ifndef STOKER_COORDINATOR_EXTERNAL_SCALER_SERVICE_H_
#define STOKER_COORDINATOR_EXTERNAL_SCALER_SERVICE_H_

// gRPC glue for KEDA's externalscaler.ExternalScaler (proto/externalscaler/), served on the
// coordinator's port under the same TLS. A ScaledObject's `external` trigger names the scope in
// its metadata (KEDA passes it as scalerMetadata):
//
//   pool: cpu-a     the worker pool the ScaledObject scales (worker --pool); absent: every worker
//   job:  resnet    one job's needs only; absent: every running job
//
// and KEDA asks:
//   GetMetricSpec → one metric, kMetricName, target 1 per replica (so the HPA's replicas equal
//                   the value: KEDA's AverageValue target divides the value by the target);
//   GetMetrics    → the scope's worker count (coordinator/scale_target.h: the advisor's counts,
//                   held by hysteresis and a cool-down);
//   IsActive      → whether that count is above 0 (false: KEDA scales the pool to zero);
//   StreamIsActive → IsActive now, then again whenever it changes (checked every
//                   kStreamCheckInterval) until KEDA cancels or the server stops.
//
// Only the scaler role may call (read-only: it cannot change the cluster), others get
// PERMISSION_DENIED; a standby replica answers UNAVAILABLE naming the leader (leader_gate.h), and
// ends a stream when it stops leading; a bad scope is INVALID_ARGUMENT naming scalerMetadata.pool
// or .job. Handlers are synchronous (gRPC's sync API threads): each takes the coordinator's status,
// which waits on its mutex, and a stream waits between checks.

#include <grpcpp/grpcpp.h>

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/tls/grpc_tls.h"
#include "coordinator/coordinator.h"
#include "coordinator/leader_gate.h"
#include "coordinator/scale_target.h"
#include "externalscaler/externalscaler.grpc.pb.h"

namespace stoker {

// Thread-safe. Does not own the coordinator, the decider or the leader gate, which must outlive
// it.
class ExternalScalerService final : public externalscaler::ExternalScaler::Service {
 public:
  static constexpr char kMetricName[] = "stoker-workers";
  static constexpr absl::Duration kStreamCheckInterval = absl::Seconds(1);
  // Most StreamIsActive calls open at once; more are RESOURCE_EXHAUSTED.
  static constexpr int kMaxStreams = 64;

  // `max_job_name_bytes`: the longest `job` accepted (the coordinator's --max-job-name-bytes).
  ExternalScalerService(Coordinator* coordinator, ScaleDecider* decider, const TlsConfig& tls,
                        uint32_t max_job_name_bytes, const LeaderGate* leader);

  // Ends open StreamIsActive calls (before the server's Shutdown, which waits for them).
  void Stop();

  grpc::Status IsActive(grpc::ServerContext* context, const externalscaler::ScaledObjectRef* ref,
                        externalscaler::IsActiveResponse* response) override;
  grpc::Status StreamIsActive(
      grpc::ServerContext* context, const externalscaler::ScaledObjectRef* ref,
      grpc::ServerWriter<externalscaler::IsActiveResponse>* writer) override;
  grpc::Status GetMetricSpec(grpc::ServerContext* context,
                             const externalscaler::ScaledObjectRef* ref,
                             externalscaler::GetMetricSpecResponse* response) override;
  grpc::Status GetMetrics(grpc::ServerContext* context,
                          const externalscaler::GetMetricsRequest* request,
                          externalscaler::GetMetricsResponse* response) override;

 private:
  // The caller's role allows `method` and this replica leads.
  absl::Status Admit(grpc::ServerContext* context, const char* method);
  // Admit; the count to report for `ref`'s scope.
  absl::StatusOr<uint32_t> Workers(grpc::ServerContext* context, const char* method,
                                   const externalscaler::ScaledObjectRef& ref);
  // The scope `ref`'s metadata names; INVALID_ARGUMENT naming the key.
  absl::StatusOr<ScaleScope> ScopeOf(const externalscaler::ScaledObjectRef& ref) const;

  Coordinator* const coordinator_;
  ScaleDecider* const decider_;
  const RoleGate gate_;
  const LeaderGate* const leader_;
  const uint32_t max_job_name_bytes_;
  absl::Mutex mu_;
  int streams_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_EXTERNAL_SCALER_SERVICE_H_
