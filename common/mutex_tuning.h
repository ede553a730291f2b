#ifndef STOKER_COMMON_MUTEX_TUNING_H_
#define STOKER_COMMON_MUTEX_TUNING_H_

// Debian's Abseil (20220623, the one gRPC 1.51 is built against) is compiled without NDEBUG, so
// absl::Mutex runs its deadlock detection in every process: each lock taken while another is
// held records an edge in a process-wide lock graph under a global lock, and a lock-order cycle
// aborts. gRPC's own mutexes are absl::Mutex, and under TLS a worker's send path takes them
// nested per record: perf on a worker streaming jpeg-uint8 batches put absl's synchronization and
// graph code at 1.7% of its samples under mutual TLS and 0.4% in plaintext
// (docs/benchmarks/e2e-faults.md). Release builds of Abseil have the detection off.

namespace stoker {

// absl::SetMutexDeadlockDetectionMode(kIgnore). Process-wide: only a binary's main calls it
// (stoker-worker, stoker-bench-client), never the client library, whose host process keeps the
// mode it chose.
void SkipMutexDeadlockDetection();

}  // namespace stoker

#endif  // STOKER_COMMON_MUTEX_TUNING_H_
