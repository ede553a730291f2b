#ifndef STOKER_COMMON_HEAP_TUNING_H_
#define STOKER_COMMON_HEAP_TUNING_H_

// Keeps freed heap memory in the process instead of returning it to the kernel.
//
// Receiving a batch makes gRPC allocate tens of MB of read slices and free them once the message
// is parsed. With glibc's default (dynamic) trim threshold the freed top of the heap goes back to
// the kernel, so the next batch faults every page in again (≈3 µs per 4 KiB page on these VMs):
// measured here, float32 reference batches over loopback, the client spent 2.5–3× more CPU and
// delivered half the images/s. A 1 GiB trim threshold keeps that memory for reuse.
//
// A fixed trim threshold also freezes glibc's mmap threshold at its 128 KiB default, so every
// larger block (a uint8 batch's payload string, gRPC's serialization buffer of it) would be a
// fresh mmap whose pages all fault. So the mmap threshold is fixed too, at glibc's maximum
// (32 MiB): blocks below it come from the heap and are reused. Measured with
// `scripts/bench.sh wire` (9.6 MB uint8 batches, docs/benchmarks/wire.md): 2x the GB/s.
//
// The trainer client (LoaderOptions::retain_heap_memory) and the worker call it. The worker's
// sends churn memory the same way under TLS (gRPC's TLS layer allocates and frees buffers for the
// encrypted records of every batch): with mutual TLS, float32 batches, the worker spent 12% less
// CPU per image with it (bench/e2e.py --tls --baseline-worker, docs/benchmarks/e2e.md).

namespace stoker {

// Once per process (thread-safe): mallopt(M_TRIM_THRESHOLD, 1 GiB) and
// mallopt(M_MMAP_THRESHOLD, 32 MiB). Skipped when the GLIBC_TUNABLES environment variable
// already sets glibc.malloc tunables, and a no-op on C libraries other than glibc.
void RetainFreedHeapMemory();

// Once per process: mallopt(M_ARENA_MAX, 1), so that every thread allocates from glibc's main
// arena. Measured in stoker-bench-client (bench/e2e.py, jpeg-uint8 under mutual TLS,
// docs/benchmarks/e2e-faults.md): with per-thread arenas the client took 6–13 minor page faults
// per image in steady state (gRPC's polling thread reads each batch into slices of its own
// arena, which kept growing onto fresh pages), with one arena 2–3, and a third less CPU. Call it
// from a binary's main before it starts threads: it changes every thread's allocation, so the
// client library never calls it (a trainer process sets GLIBC_TUNABLES=glibc.malloc.arena_max=1
// itself). Same GLIBC_TUNABLES and non-glibc rules as RetainFreedHeapMemory.
void UseOneHeapArena();

}  // namespace stoker

#endif  // STOKER_COMMON_HEAP_TUNING_H_
