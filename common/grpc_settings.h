#ifndef STOKER_COMMON_GRPC_SETTINGS_H_
#define STOKER_COMMON_GRPC_SETTINGS_H_

// gRPC channel and server settings every Stoker process shares (gRPC glue only; logic code
// never includes this). Keepalive is consistent between clients and servers:
//   - clients (trainer -> coordinator / worker, worker -> coordinator) ping every
//     kKeepaliveTime only while calls are open, and give up on a connection after
//     kKeepaliveTimeout without an answer;
//   - servers accept pings as often as every kMinPingInterval (< kKeepaliveTime, so clients
//     never get GOAWAY too_many_pings) and ping their own clients every kKeepaliveTime, so that
//     streams of a vanished peer end (and their tasks are handed back) within
//     kKeepaliveTime + kKeepaliveTimeout even without a TCP reset.
// Message size: a batch message is the tensor plus a header of at most kHeaderBytesPerSample
// per sample (index + label varints) and kHeaderSlackBytes of fixed fields; the client's
// receive limit is derived from the job's batch bytes (MaxBatchMessageBytes), so an oversize
// message fails its stream with RESOURCE_EXHAUSTED instead of being accepted unbounded.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <limits>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace stoker {

inline constexpr int kKeepaliveTimeMs = 20000;
inline constexpr int kKeepaliveTimeoutMs = 10000;
inline constexpr int kMinPingIntervalMs = 10000;
inline constexpr uint64_t kHeaderBytesPerSample = 24;
inline constexpr uint64_t kHeaderSlackBytes = 64 * 1024;

// The deadline of a call given `timeout`. gRPC takes deadlines on the wall clock (system_clock)
// and turns them into its own monotonic time as the call starts: the base is the wall time now,
// not a Clock's reading (which may have parted from the wall clock since the process started).
inline std::chrono::system_clock::time_point DeadlineAfter(absl::Duration timeout) {
  return absl::ToChronoTime(absl::Now() + timeout);
}

// Keepalive for a client channel.
inline void ApplyClientKeepalive(grpc::ChannelArguments* args) {
  args->SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  args->SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  args->SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 0);
}

// Keepalive for a server, consistent with ApplyClientKeepalive.
inline void ApplyServerKeepalive(grpc::ServerBuilder* builder) {
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                              kMinPingIntervalMs);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
}

// A server's bounds on what its clients may make it hold (docs/security.md, "Limits"): the
// largest request message it reads (larger ones fail RESOURCE_EXHAUSTED before parsing), the
// calls in flight per connection (HTTP/2 max concurrent streams), and, when `memory_bytes` > 0,
// the memory gRPC may use for connections and buffers (a resource quota).
inline void ApplyServerLimits(grpc::ServerBuilder* builder, int max_request_bytes,
                              int max_calls_per_connection, uint64_t memory_bytes) {
  builder->SetMaxReceiveMessageSize(max_request_bytes);
  builder->AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, max_calls_per_connection);
  if (memory_bytes > 0) {
    grpc::ResourceQuota quota("stoker-server");
    quota.Resize(static_cast<size_t>(memory_bytes));
    builder->SetResourceQuota(quota);
  }
}

// Largest BatchMessage of a job whose tensor is `batch_bytes` for `batch_size` samples, as a
// gRPC size limit (capped at INT_MAX).
inline int MaxBatchMessageBytes(uint64_t batch_bytes, uint64_t batch_size) {
  const uint64_t bytes = batch_bytes + batch_size * kHeaderBytesPerSample + kHeaderSlackBytes;
  return bytes > static_cast<uint64_t>(std::numeric_limits<int>::max())
             ? std::numeric_limits<int>::max()
             : static_cast<int>(bytes);
}

}  // namespace stoker

#endif  // STOKER_COMMON_GRPC_SETTINGS_H_
