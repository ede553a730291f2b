#include "common/heap_tuning.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "common/logging.h"

namespace stoker {
namespace {

// The operator's GLIBC_TUNABLES win over the settings here.
bool HeapTuningSetByEnvironment() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr;
}

}  // namespace

void RetainFreedHeapMemory() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    if (HeapTuningSetByEnvironment()) return;
    constexpr int kTrimThreshold = 1 << 30;
    if (mallopt(M_TRIM_THRESHOLD, kTrimThreshold) != 1) {
      STOKER_LOG(WARNING) << "mallopt(M_TRIM_THRESHOLD) failed; receiving may page-fault more";
    }
    // glibc's largest mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit): see the header.
    constexpr int kMmapThreshold = 32 << 20;
    if (mallopt(M_MMAP_THRESHOLD, kMmapThreshold) != 1) {
      STOKER_LOG(WARNING) << "mallopt(M_MMAP_THRESHOLD) failed; large batches may page-fault";
    }
  });
#endif
}

void UseOneHeapArena() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    if (HeapTuningSetByEnvironment()) return;
    if (mallopt(M_ARENA_MAX, 1) != 1) {
      STOKER_LOG(WARNING) << "mallopt(M_ARENA_MAX) failed; receiving may page-fault more";
    }
  });
#endif
}

}  // namespace stoker
