#ifndef STOKER_COMMON_READ_WAKEUP_TUNING_H_
#define STOKER_COMMON_READ_WAKEUP_TUNING_H_

// Fewer wake-ups on the client's receive path: turns on two experiments of gRPC 1.51's TCP
// endpoint, `tcp_frame_size_tuning` (the transport tells TCP how many bytes the frame it is
// reading still needs) and `tcp_rcv_lowat` (TCP then sets SO_RCVLOWAT, so the reading thread
// wakes when those bytes are there rather than for every segment). A batch is megabytes, so most
// wake-ups were for partial frames. Measured: stoker-bench-client's CPU per 224x224x3 float32
// image over loopback 0.16-0.21 ms -> 0.14-0.15 ms in alternating runs (docs/benchmarks/e2e.md,
// docs/decisions/0037-e2e-accounting-client-read-wakeups.md).
//
// gRPC reads its experiments once, from the GRPC_EXPERIMENTS environment variable, the first time
// any of them is consulted (when the process makes its first connection), so this must run before
// that; a process whose gRPC already started keeps what it read.

namespace stoker {

// The experiments' names, as GRPC_EXPERIMENTS takes them.
inline constexpr char kGrpcReadExperiments[] = "tcp_frame_size_tuning,tcp_rcv_lowat";

// Once per process (thread-safe): sets GRPC_EXPERIMENTS to kGrpcReadExperiments, unless the
// environment already sets GRPC_EXPERIMENTS (even to nothing: the user's choice wins).
void EnableGrpcReadExperiments();

}  // namespace stoker

#endif  // STOKER_COMMON_READ_WAKEUP_TUNING_H_
