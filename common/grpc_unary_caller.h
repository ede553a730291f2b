#ifndef STOKER_COMMON_GRPC_UNARY_CALLER_H_
#define STOKER_COMMON_GRPC_UNARY_CALLER_H_

// Unary gRPC calls the way every Stoker client makes them: a deadline on each call, the status
// converted with the peer named in the message, and a Shutdown() that cancels calls in flight
// (so a stopping process does not wait out a deadline). For gRPC glue files only.
//
//   UnaryCaller caller("coordinator " + address, absl::Seconds(10));
//   absl::StatusOr<OpenJobResponse> r = caller.Call(stub.get(), &Coordinator::Stub::OpenJob, req);

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/grpc_settings.h"
#include "common/grpc_status.h"

namespace stoker {

// Thread-safe.
class UnaryCaller {
 public:
  // `peer` prefixes error messages, e.g. "coordinator 127.0.0.1:7070".
  UnaryCaller(std::string peer, absl::Duration timeout)
      : peer_(std::move(peer)), timeout_(timeout) {}

  // Calls `method` on `stub`. After Shutdown(): CANCELLED without calling.
  template <typename Stub, typename Request, typename Response>
  absl::StatusOr<Response> Call(Stub* stub,
                                grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                                             Response*),
                                const Request& request) {
    return Call(stub, method, request, absl::InfiniteFuture(), nullptr);
  }

  // As above, by `deadline` when it comes before the timeout's; with `trailer`, trailer->value
  // becomes the value of the answer's trailing metadata trailer->key (empty when absent).
  struct Trailer {
    std::string key;
    std::string value;
  };
  template <typename Stub, typename Request, typename Response>
  absl::StatusOr<Response> Call(Stub* stub,
                                grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                                             Response*),
                                const Request& request, absl::Time deadline, Trailer* trailer) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(std::min(deadline, absl::Now() + timeout_)));
    {
      absl::MutexLock lock(&mu_);
      if (shut_down_) return absl::CancelledError(peer_ + ": client is shutting down");
      in_flight_.insert(&context);
    }
    Response response;
    grpc::Status status = (stub->*method)(&context, request, &response);
    {
      absl::MutexLock lock(&mu_);
      in_flight_.erase(&context);
    }
    if (trailer != nullptr) {
      const auto& metadata = context.GetServerTrailingMetadata();
      const auto it = metadata.find(trailer->key);
      trailer->value =
          it == metadata.end() ? "" : std::string(it->second.data(), it->second.size());
    }
    if (!status.ok()) return FromGrpcStatus(status, peer_);
    return response;
  }

  // Cancels the calls in flight and fails later ones with CANCELLED.
  void Shutdown() {
    absl::MutexLock lock(&mu_);
    shut_down_ = true;
    for (grpc::ClientContext* context : in_flight_) context->TryCancel();
  }

 private:
  const std::string peer_;
  const absl::Duration timeout_;
  absl::Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_set<grpc::ClientContext*> in_flight_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stoker

#endif  // STOKER_COMMON_GRPC_UNARY_CALLER_H_
