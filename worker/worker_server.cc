#include "worker/worker_server.h"

#include <grpc/support/time.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_settings.h"
#include "common/grpc_status.h"
#include "common/tls/grpc_tls.h"
#include "stoker/v1/worker.grpc.pb.h"
#include "worker/advertise_address.h"
#include "worker/stream_batches_server_reactor.h"
#include "worker/worker.h"

namespace stoker {
namespace {

constexpr absl::Duration kShutdownDeadline = absl::Seconds(3);

// Shuts `server` down, cancelling the calls still running after `grace`. gRPC waits for the
// deadline on its own clock, so the grace is measured on gRPC's monotonic clock: the injected
// Clock may be a test's fake, and need not be the wall clock a std::chrono deadline assumes.
void ShutdownWithin(grpc::Server& server, absl::Duration grace) {
  server.Shutdown(
      gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                   gpr_time_from_micros(absl::ToInt64Microseconds(grace), GPR_TIMESPAN)));
}

// Answers a refused stream with `status` at once and deletes itself when gRPC is done with it.
class DeniedStream : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  explicit DeniedStream(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

// Streams only to trainers (with TLS; common/tls/grpc_tls.h). StreamBatches is registered raw
// (ByteBuffer in and out) so that batches go out without a serialization copy
// (worker/batch_wire_encoder.h); the wire format is stoker.v1's.
class WorkerService
    : public stoker::v1::Worker::WithRawCallbackMethod_StreamBatches<stoker::v1::Worker::Service> {
 public:
  WorkerService(Worker* worker, const TlsConfig& tls) : worker_(worker), gate_(tls) {}

  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StreamBatches(
      grpc::CallbackServerContext* context) override {
    absl::StatusOr<std::optional<Principal>> caller =
        gate_.Check(*context, "StreamBatches", {Role::kTrainer});
    if (!caller.ok()) return new DeniedStream(caller.status());
    if (absl::Status full = worker_->AdmitStream(); !full.ok()) return new DeniedStream(full);
    // Releases its admission when done.
    return new StreamBatchesServerReactor(worker_, TenantScope::Of(*caller));
  }

 private:
  Worker* const worker_;
  const RoleGate gate_;
};

}  // namespace

struct WorkerServer::Impl {
  absl::Duration drain_deadline;
  std::unique_ptr<Worker> worker;
  std::unique_ptr<grpc::Service> service;  // A WorkerService.
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  std::string address;
  absl::Mutex mu;
  bool stopped ABSL_GUARDED_BY(mu) = false;
  bool draining ABSL_GUARDED_BY(mu) = false;

  // Health follows registration (NOT_SERVING while the coordinator does not know this worker)
  // until the worker drains or stops.
  void OnRegistration(bool registered) {
    absl::MutexLock lock(&mu);
    if (stopped || draining) return;
    if (auto* health = server->GetHealthCheckService()) health->SetServingStatus(registered);
  }
};

absl::StatusOr<std::unique_ptr<WorkerServer>> WorkerServer::Start(const WorkerConfig& config,
                                                                  DatasetIo io, Clock* clock) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  auto impl = std::make_unique<Impl>();
  impl->drain_deadline = config.drain_deadline;
  impl->worker = std::make_unique<Worker>(
      config, NewGrpcCoordinatorClient(config.coordinator_address, config.rpc_timeout, config.tls),
      std::move(io), clock);
  impl->service = std::make_unique<WorkerService>(impl->worker.get(), config.tls);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  WarnIfInsecure(config.tls, "worker");
  builder.AddListeningPort(config.listen_address, ServerCredentials(config.tls), &impl->port);
  ApplyServerKeepalive(&builder);
  // Batches go out, requests are small: no resource quota, which would also bound the sends.
  // Calls per connection above max_streams, so that a stream beyond it reaches the handler and
  // is refused (RESOURCE_EXHAUSTED naming --max-streams) instead of waiting for a slot.
  ApplyServerLimits(&builder, static_cast<int>(config.max_request_bytes),
                    static_cast<int>(std::min<uint64_t>(2 * uint64_t{config.max_streams},
                                                        std::numeric_limits<int>::max())),
                    /*memory_bytes=*/0);
  builder.RegisterService(impl->service.get());
  impl->server = builder.BuildAndStart();
  if (impl->server == nullptr || impl->port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", config.listen_address));
  }
  absl::StatusOr<std::string> address =
      ResolveAdvertiseAddress(config.advertise_inputs(), impl->port, LocalAddressToward);
  if (!address.ok()) {
    ShutdownWithin(*impl->server, absl::ZeroDuration());
    return address.status();
  }
  impl->address = *std::move(address);
  impl->OnRegistration(false);
  impl->worker->SetRegistrationObserver(
      [impl = impl.get()](bool registered) { impl->OnRegistration(registered); });
  if (absl::Status status = impl->worker->Start(impl->address); !status.ok()) {
    ShutdownWithin(*impl->server, absl::ZeroDuration());
    return status;
  }
  return std::unique_ptr<WorkerServer>(new WorkerServer(std::move(impl)));
}

WorkerServer::WorkerServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

WorkerServer::~WorkerServer() { Stop(); }

int WorkerServer::port() const { return impl_->port; }
const std::string& WorkerServer::address() const { return impl_->address; }
Worker* WorkerServer::worker() { return impl_->worker.get(); }

void WorkerServer::Drain() {
  {
    absl::MutexLock lock(&impl_->mu);
    impl_->draining = true;
  }
  if (auto* health = impl_->server->GetHealthCheckService()) health->SetServingStatus(false);
  impl_->worker->Drain(impl_->drain_deadline);
}

void WorkerServer::Stop() {
  {
    absl::MutexLock lock(&impl_->mu);
    if (impl_->stopped) return;
    impl_->stopped = true;
  }
  if (auto* health = impl_->server->GetHealthCheckService()) health->Shutdown();
  impl_->worker->Stop();
  ShutdownWithin(*impl_->server, kShutdownDeadline);
  impl_->server->Wait();
}

}  // namespace stoker
